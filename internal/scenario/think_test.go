package scenario

import (
	"strings"
	"testing"
	"time"
)

// A think time reads as a duration does (with its messages for values
// below 0), or as a range of them.
func TestThinkTimeText(t *testing.T) {
	for _, c := range []struct{ think, want string }{
		{"-1s", `think: expected a duration ≥ 0, found -1s`},
		{"-2", `think: expected a duration ≥ 0 such as 30s, found -2`},
		{"'5'", `think: expected a duration such as 100ms, or a range such as 50ms..150ms, found "5"`},
		{"-1s..2s", `think: expected a duration such as 100ms, or a range such as 50ms..150ms, found "-1s..2s"`},
		{"2s..1s", `think: expected a range from low to high such as 50ms..150ms, found 2s > 1s`},
	} {
		_, err := Parse("t.yaml", []byte("base: http://127.0.0.1:1\nrequests: 1\nthink: "+c.think+"\nsteps: [{name: a, path: /}]\n"), LoadOptions{})
		if err == nil || !strings.HasSuffix(err.Error(), c.want) {
			t.Errorf("think: %s: got %v, want %q", c.think, err, c.want)
		}
	}
	for think, want := range map[string][2]time.Duration{"0.5": {500 * time.Millisecond, 500 * time.Millisecond}, "1..2s": {time.Second, 2 * time.Second}, "' 10ms .. 20ms'": {10 * time.Millisecond, 20 * time.Millisecond}} {
		s := mustParse(t, "base: http://127.0.0.1:1\nrequests: 1\nthink: "+think+"\nsteps: [{name: a, path: /}]\n")
		if s.think.lo != want[0] || s.think.hi != want[1] {
			t.Errorf("think: %q: %v..%v, want %v..%v", think, s.think.lo, s.think.hi, want[0], want[1])
		}
	}
}
