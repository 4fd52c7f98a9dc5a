package main

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Files written with -o follow the umask like any new file (not
// os.CreateTemp's 0600), a replaced file keeps its permissions, and nothing
// is at the final path before Commit.
func TestOutputFileMode(t *testing.T) {
	t.Parallel()
	old := syscall.Umask(0o027)
	defer syscall.Umask(old)
	dir := t.TempDir()
	path := filepath.Join(dir, "r.json")
	write := func() {
		t.Helper()
		o, err := openOutput(path, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := o.Write([]byte("{}\n")); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(path); err == nil && o.f != nil {
			if b, _ := os.ReadFile(path); string(b) != "{}\n" {
				t.Fatal("the final path holds a partial file before Commit")
			}
		}
		if err := o.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	write()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Mode().Perm(); got != 0o640 {
		t.Errorf("new file mode %o, want 0640 under umask 027", got)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	write()
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("replaced file mode %o, want its own 0600 kept", st.Mode().Perm())
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".r.json.tmp-*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
