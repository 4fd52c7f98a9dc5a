package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Item by item, the one-line messages of bad input: exit 1, one "hail: "
// line naming the value and what to do, nothing on stdout, no file left.
func TestMessages(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	null := write("null.json", "null\n")
	vegeta := write("vegeta.json", `{"latencies":{"total":1000,"mean":5},"requests":10,"rate":2,"success":1}`)
	cycle := write("cycle.yaml", "base: http://127.0.0.1:1\nrequests: 1\nvariables:\n  a: '{{var.b}}'\n  b: 'x{{var.a}}'\nsteps:\n  - {name: s, path: '/{{var.a}}'}\n")
	base := startServe(t)
	good := filepath.Join(dir, "good.json")
	if _, se, code := hail(t, "-n", "5", "-j", "-o", good, base+"/"); code != 0 {
		t.Fatal(se)
	}
	out := filepath.Join(t.TempDir(), "out.json")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-z", "9999999h", "http://127.0.0.1:1/"}, `"9999999h" is too long: the longest duration is 2562047h`},
		{[]string{"-t", "1e10", "http://127.0.0.1:1/"}, `"1e10" is too long`},
		{[]string{"--unix-socket", filepath.Join(dir, "none.sock"), "-o", out, "http://localhost/"}, "--unix-socket " + filepath.Join(dir, "none.sock") + ": no such socket"},
		{[]string{"--unix-socket", null, "http://localhost/"}, "not a unix socket (it is a regular file)"},
		{[]string{"--vsock-uds", filepath.Join(dir, "fc.vsock") + ":52", "http://localhost/"}, "--vsock-uds " + filepath.Join(dir, "fc.vsock") + ": no such socket"},
		{[]string{"report", null}, null + ": not a hail result: the file holds a JSON null"},
		{[]string{"report", vegeta}, vegeta + ": not a hail result: it has no summary"},
		{[]string{"compare", good, vegeta}, vegeta + ": not a hail result"},
		{[]string{"compare", null + "," + good, good}, null + ": not a hail result"},
		{[]string{"merge", good, null, "-o", out}, "not a hail result"},
		{[]string{"run", cycle, "--check"}, cycle + ":5:8: variables.b: {{var.a}} closes a cycle (a → b → a)"},
	} {
		stdout, stderr, code := hailIn(t, tc.args...)
		name := strings.Join(tc.args, " ")
		if code != 1 || stdout != "" || strings.Count(strings.TrimRight(stderr, "\n"), "\n") != 0 || !strings.HasPrefix(stderr, "hail: ") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 1 and one line", name, code, stdout, stderr)
		}
		if !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: %q lacks %q", name, stderr, tc.want)
		}
	}
	if entries, _ := os.ReadDir(filepath.Dir(out)); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
}
