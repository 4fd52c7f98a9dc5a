package llm

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// maxLength bounds a token length: prompts are built in memory.
const maxLength = 1 << 20

// Lengths is a distribution of token lengths (--input-tokens,
// --output-tokens), drawn per request from its number:
//
//	128            always 128
//	100-200        uniform from 100 to 200
//	64:3,512:1     64 three times in four, 512 once (weights)
//	normal:128,32  normal, mean 128 and standard deviation 32, rounded,
//	               at least 1 and at most mean + 4 deviations
//	lognormal:128,64  log-normal of mean 128 and standard deviation 64
//	               (long-tailed, as real prompt and reply lengths are),
//	               rounded, at least 1 and at most mean + 8 deviations
type Lengths struct {
	spec       string
	kind       byte // 'f' fixed, 'u' uniform, 'w' weighted, 'n' normal, 'l' log-normal
	lo, hi     int
	mean, sd   float64
	values     []int
	cumWeights []float64
}

// ParseLengths parses a Lengths spec; its error says what is wrong and
// what is accepted.
func ParseLengths(spec string) (Lengths, error) {
	s := strings.TrimSpace(spec)
	l := Lengths{spec: s}
	bad := func(why string) (Lengths, error) {
		return Lengths{}, fmt.Errorf("%q: %s; give N, LOW-HIGH, N:WEIGHT,M:WEIGHT, normal:MEAN,SD or lognormal:MEAN,SD (token counts from 1 to %d)", spec, why, maxLength)
	}
	count := func(v string) (int, bool) {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		return n, err == nil && n >= 1 && n <= maxLength
	}
	switch {
	case strings.HasPrefix(s, "normal:") || strings.HasPrefix(s, "lognormal:"):
		name, args, _ := strings.Cut(s, ":")
		m, d, ok := strings.Cut(args, ",")
		mean, err1 := strconv.ParseFloat(strings.TrimSpace(m), 64)
		sd, err2 := strconv.ParseFloat(strings.TrimSpace(d), 64)
		if !ok || err1 != nil || err2 != nil || mean < 1 || mean > maxLength || sd < 0 || math.IsNaN(sd) || sd > maxLength {
			return bad(name + " needs a mean from 1 and a deviation from 0")
		}
		l.kind, l.mean, l.sd = 'n', mean, sd
		l.lo, l.hi = 1, min(int(mean+4*sd), maxLength)
		if name == "lognormal" {
			// The underlying normal's parameters, from the mean and
			// deviation asked for.
			v := math.Log1p(sd * sd / (mean * mean))
			l.kind, l.mean, l.sd = 'l', math.Log(mean)-v/2, math.Sqrt(v)
			l.hi = min(int(mean+8*sd), maxLength)
		}
	case strings.Contains(s, ":"):
		var total float64
		for _, part := range strings.Split(s, ",") {
			v, w, _ := strings.Cut(part, ":")
			n, ok := count(v)
			weight, err := strconv.ParseFloat(strings.TrimSpace(w), 64)
			if !ok || err != nil || weight <= 0 || math.IsInf(weight, 0) {
				return bad(fmt.Sprintf("%q is not a length with a positive weight", part))
			}
			total += weight
			l.values = append(l.values, n)
			l.cumWeights = append(l.cumWeights, total)
		}
		for i := range l.cumWeights {
			l.cumWeights[i] /= total
		}
		l.kind = 'w'
	case strings.Contains(s, "-"):
		a, b, _ := strings.Cut(s, "-")
		lo, ok1 := count(a)
		hi, ok2 := count(b)
		if !ok1 || !ok2 || lo > hi {
			return bad("a range needs LOW ≤ HIGH")
		}
		l.kind, l.lo, l.hi = 'u', lo, hi
	default:
		n, ok := count(s)
		if !ok {
			return bad("not a token count")
		}
		l.kind, l.lo, l.hi = 'f', n, n
	}
	return l, nil
}

// String is the spec as given.
func (l Lengths) String() string { return l.spec }

// At is the length of request hit; salt keeps the input and output draws
// of one request apart.
func (l Lengths) At(hit, salt uint64) int {
	u := unit(mix(hit, salt))
	switch l.kind {
	case 'u':
		return l.lo + min(int(u*float64(l.hi-l.lo+1)), l.hi-l.lo)
	case 'w':
		for i, c := range l.cumWeights {
			if u < c {
				return l.values[i]
			}
		}
		return l.values[len(l.values)-1]
	case 'n', 'l':
		// Box-Muller from two uniforms of the request.
		v := unit(mix(hit, salt^0x9e3779b97f4a7c15))
		z := math.Sqrt(-2*math.Log(1-u)) * math.Cos(2*math.Pi*v)
		x := l.mean + l.sd*z
		if l.kind == 'l' {
			x = math.Exp(x)
		}
		return min(max(int(math.Round(x)), l.lo), l.hi)
	}
	return l.lo
}

// mix is a 64-bit hash of a request number and a salt (splitmix64's
// finalizer).
func mix(hit, salt uint64) uint64 {
	z := hit*0x9e3779b97f4a7c15 + salt
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// unit maps a hash to [0, 1).
func unit(h uint64) float64 { return float64(h>>11) / (1 << 53) }
