package random

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestRegex(t *testing.T) {
	r := New(7)
	for _, pat := range []string{
		`[a-z][a-z][0-9]`, `/items/[0-9a-f]{16}`, `(GET|PUT)-x?y*z+`, `(?i)abc`, `\d{3}-\w{2}`, `^/a(b|c){2,3}$`,
		`[^/]{4}`, `.{5}`, `é+ü`, `\pL{3}`,
	} {
		g, err := CompileRegex(pat, DefaultMaxRepeat)
		if err != nil {
			t.Fatalf("%q: %v", pat, err)
		}
		re := regexp.MustCompile(`^(?:` + pat + `)$`)
		for range 300 {
			s := g.String(r)
			if !re.MatchString(s) {
				t.Fatalf("%q generated %q, which does not match", pat, s)
			}
		}
	}
	// Classes that cover most of Unicode generate printable ASCII.
	g, _ := CompileRegex(`[^/]{20}`, 4)
	for range 50 {
		for _, c := range g.String(r) {
			if c < 0x20 || c > 0x7e {
				t.Fatalf("[^/] generated %q", c)
			}
		}
	}
}

// --max-repeat bounds x*, x+ and x{n,} as oha's does: at most max extra repeats.
func TestRegexMaxRepeat(t *testing.T) {
	r := New(3)
	for _, tc := range []struct {
		pat      string
		max      int
		min, top int
	}{{`a*`, 4, 0, 4}, {`a+`, 4, 1, 5}, {`a{2,}`, 3, 2, 5}, {`a{2,3}`, 100, 2, 3}, {`a*`, 0, 0, 0}} {
		g, err := CompileRegex(tc.pat, tc.max)
		if err != nil {
			t.Fatal(err)
		}
		lo, hi := 1<<30, -1
		for range 2000 {
			n := len(g.String(r))
			lo, hi = min(lo, n), max(hi, n)
		}
		if lo != tc.min || hi != tc.top {
			t.Errorf("%q max-repeat %d: lengths %d..%d, want %d..%d", tc.pat, tc.max, lo, hi, tc.min, tc.top)
		}
	}
}

func TestRegexErrors(t *testing.T) {
	for _, tc := range []struct{ pat, want string }{
		{`a(`, "missing closing )"},
		{`[^\x00-\x{10FFFF}]`, "matches nothing"},
		{`(a{1000}){1000}`, ""}, // too long, or rejected by the parser
	} {
		_, err := CompileRegex(tc.pat, 4)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want it to mention %q", tc.pat, err, tc.want)
		}
	}
}

// The generator never panics, never exceeds its length bound, and what it
// generates matches the pattern (when the pattern has no anchors or word
// boundaries, which generate nothing and may make a match impossible).
func FuzzRegex(f *testing.F) {
	for _, s := range []string{`[a-z][a-z][0-9]`, `(a|b)*c+`, `\d{2,5}`, `(?i)héllo`, `.`, `[^a]`, `x{3,}`, `a|`, `()*`} {
		f.Add(s, uint8(4))
	}
	f.Fuzz(func(t *testing.T, pat string, maxRep uint8) {
		g, err := CompileRegex(pat, int(maxRep%16))
		if err != nil {
			return
		}
		re, err := syntax.Parse(pat, syntax.Perl)
		if err != nil {
			t.Fatalf("compiled %q that syntax.Parse rejects", pat)
		}
		check := !hasEmptyWidth(re)
		full, err := regexp.Compile(`^(?:` + pat + `)$`)
		if err != nil {
			check = false
		}
		r := New(uint64(len(pat)))
		for range 20 {
			b := g.AppendTo(nil, r)
			if len(b) > maxGenLen {
				t.Fatalf("%q generated %d bytes", pat, len(b))
			}
			if check && utf8.Valid(b) && !full.Match(b) {
				t.Fatalf("%q generated %q, which does not match", pat, b)
			}
		}
	})
}

func hasEmptyWidth(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return true
	}
	for _, s := range re.Sub {
		if hasEmptyWidth(s) {
			return true
		}
	}
	return false
}
