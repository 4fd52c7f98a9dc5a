package bodyfile

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// units are the size suffixes ParseSize accepts, binary multiples all: k,
// KB and KiB all mean 1024.
var units = []struct {
	suffixes []string
	mult     int64
}{
	{[]string{"tib", "tb", "t"}, 1 << 40},
	{[]string{"gib", "gb", "g"}, 1 << 30},
	{[]string{"mib", "mb", "m"}, 1 << 20},
	{[]string{"kib", "kb", "k"}, 1 << 10},
	{[]string{"b", ""}, 1},
}

// ParseSize reads a size in bytes: a number with an optional binary suffix,
// as 65536, 64k, 64KiB, 1.5g or 2GB (every multiple is of 1024).
func ParseSize(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	for _, u := range units {
		for _, suf := range u.suffixes {
			num, ok := strings.CutSuffix(t, suf)
			if !ok {
				continue
			}
			f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
			if err != nil || math.IsNaN(f) || f <= 0 {
				break
			}
			v := f * float64(u.mult)
			if v >= math.MaxInt64 {
				return 0, fmt.Errorf("%q is too large a size", s)
			}
			if v < 1 {
				break
			}
			return int64(math.Ceil(v)), nil
		}
	}
	return 0, fmt.Errorf("%q is not a size: write it like 64MiB, 512k or 2g", s)
}

// FormatSize writes n bytes for people: 512 B, 64 KiB, 1.5 GiB.
func FormatSize(n int64) string {
	for _, u := range []struct {
		name string
		mult int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.mult {
			v := float64(n) / float64(u.mult)
			if n%u.mult == 0 {
				return fmt.Sprintf("%d %s", n/u.mult, u.name)
			}
			return fmt.Sprintf("%.1f %s", v, u.name)
		}
	}
	return fmt.Sprintf("%d B", n)
}

// suggest is a --body-file-limit value that admits n bytes: n rounded up to
// whole MiB (or GiB from 1 GiB on).
func suggest(n int64) string {
	if n >= 1<<30 {
		return fmt.Sprintf("%dGiB", (n+1<<30-1)>>30)
	}
	return fmt.Sprintf("%dMiB", (n+1<<20-1)>>20)
}
