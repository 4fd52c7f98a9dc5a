package main

import (
	"strings"
	"testing"
)

// A mistyped command is not read as a URL without a scheme: one line with
// "did you mean", exit 1; a real host name without a scheme still gets the
// scheme advice.
func TestMistypedCommand(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"srve"}, `unknown command "srve": did you mean 'hail serve'?`},
		{[]string{"sevre", "--addr", "127.0.0.1:1"}, `unknown command "sevre": did you mean 'hail serve'?`},
		{[]string{"version"}, `unknown command "version": did you mean 'hail --version' (-V)?`},
		{[]string{"comapre", "a.json", "b.json"}, `unknown command "comapre": did you mean 'hail compare'?`},
		{[]string{"rn", "s.yaml"}, `unknown command "rn": did you mean 'hail run'?`},
		{[]string{"localhost"}, `URL "localhost" has no scheme: write http://localhost or https://localhost`},
		{[]string{"127.0.0.1:8080"}, `URL "127.0.0.1:8080" has no scheme`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Parallel()
			_, errOut, code := hailIn(t, tc.args...)
			if code != 1 || !strings.Contains(errOut, tc.want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
				t.Errorf("exit %d, stderr %q: want one line with %q", code, errOut, tc.want)
			}
		})
	}
}
