package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// underVMLimit runs hail with its address space capped (ulimit -v, in KiB)
// and returns stderr and the exit code.
func underVMLimit(t *testing.T, kib int, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command("sh", append([]string{"-c", fmt.Sprintf(`ulimit -v %d && exec "$0" "$@"`, kib), hailBin}, args...)...)
	cmd.Env = append(os.Environ(), "MALLOC_ARENA_MAX=2") // fewer glibc arenas: less address space for the runtime's threads
	_, se, code := runBounded(t, cmd)
	return se, code
}

// A body file larger than the limit (or than memory) ends in one line and
// exit 1, under a memory cap that os.ReadFile would have crashed against
// ("fatal error: out of memory" and a goroutine dump before this fix).
func TestBodyFileLimitUnderUlimit(t *testing.T) {
	t.Parallel()
	base := startServe(t)
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	if err := os.WriteFile(small, []byte("hello\nworld\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(dir, "huge") // sparse: 64 GiB that take no disk
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(64 << 30); err != nil {
		t.Skipf("no sparse files here: %v", err)
	}
	f.Close()

	// The smallest of these caps that a normal run works under (the Go
	// runtime's reservations depend on the machine).
	limit := 0
	for _, kib := range []int{1 << 20, 3 << 19, 2 << 20, 3 << 20, 4 << 20} {
		if se, code := underVMLimit(t, kib, "-n", "2", "--no-tui", "--output-format", "quiet", "-m", "POST", "-Z", small, base+"/echo"); code == 0 {
			limit = kib
			break
		} else {
			t.Logf("ulimit -v %d: exit %d, %.100s", kib, code, se)
		}
	}
	if limit == 0 {
		t.Skip("hail does not run under ulimit -v up to 4 GiB here")
	}
	scen := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(scen, []byte("base: "+base+"\nrequests: 1\nsteps:\n  - name: up\n    method: POST\n    path: /echo\n    body_file: huge\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"-D", huge}, []string{"-D " + huge + ": 64 GiB is over the 64 MiB limit", "--body-file-limit 64GiB"}},
		{[]string{"-Z", huge}, []string{"-Z " + huge + ": 64 GiB is over the 64 MiB limit"}},
		{[]string{"--body-file-limit", "512k", "-D", "/dev/zero"}, []string{"-D /dev/zero: more than the 512 KiB limit", "--body-file-limit SIZE"}},
		{[]string{"--body-file-limit", "1m", "-Z", "/dev/zero"}, []string{"-Z /dev/zero: more than the 1 MiB limit"}},
		// the limit raised past what the process may allocate: still one line
		{[]string{"--body-file-limit", "128g", "-D", huge}, []string{"-D " + huge + ": 64 GiB needs 64.5 GiB of address space", "ulimit -v", "leaves"}},
		{[]string{"--body-file-limit", "128g", "-D", "/dev/zero"}, []string{"-D /dev/zero: longer than hail has memory for: ulimit -v", "leaves"}},
		{[]string{"run", scen}, []string{scen + ":7:16: up.body_file: " + huge + ": 64 GiB is over the 64 MiB limit"}},
	} {
		args := tc.args
		if args[0] != "run" {
			args = append(append([]string{"-n", "1", "--no-tui"}, args...), base+"/echo")
		}
		se, code := underVMLimit(t, limit, args...)
		name := strings.Join(tc.args, " ")
		if code != 1 || strings.Count(strings.TrimRight(se, "\n"), "\n") != 0 || !strings.HasPrefix(se, "hail: ") {
			t.Errorf("%s: exit %d, want 1 and one line; stderr %.300q", name, code, se)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(se, w) {
				t.Errorf("%s: %q lacks %q", name, se, w)
			}
		}
	}
}
