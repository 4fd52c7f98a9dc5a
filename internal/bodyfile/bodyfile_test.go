package bodyfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func write(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "body")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRead(t *testing.T) {
	p := write(t, "hello")
	b, err := Read(p, 5)
	if err != nil || string(b) != "hello" {
		t.Fatalf("Read = %q, %v", b, err)
	}
	_, err = Read(p, 4)
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Size != 5 || tl.Limit != 4 {
		t.Fatalf("over the limit: %v", err)
	}
	if want := p + ": 5 B is over the 4 B limit for files hail holds in memory: raise it with --body-file-limit 1MiB"; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	if b, err := Read(write(t, ""), 0); err != nil || len(b) != 0 {
		t.Errorf("empty file: %q, %v", b, err)
	}
	_, err = Read(filepath.Join(t.TempDir(), "missing"), 0)
	if err == nil || !strings.HasSuffix(err.Error(), "missing: no such file or directory") || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	if _, err := Read(t.TempDir(), 0); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("directory: %v", err)
	}
}

// A regular file is measured, not read: a sparse 1 TiB file is refused at
// once without a byte of it in memory.
func TestReadHugeSparseFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "huge")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 40); err != nil {
		t.Skipf("cannot make a sparse file here: %v", err)
	}
	f.Close()
	start := time.Now()
	_, err = Read(p, 0)
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Size != 1<<40 {
		t.Fatalf("err %v", err)
	}
	if !strings.Contains(err.Error(), "1 TiB is over the 64 MiB limit") || !strings.Contains(err.Error(), "--body-file-limit 1024GiB") {
		t.Errorf("message %q", err)
	}
	if el := time.Since(start); el > time.Second {
		t.Errorf("refusing took %v: the file was read", el)
	}
}

// Streams of unknown length (a device, a FIFO) are read up to the limit
// and no further.
func TestReadStream(t *testing.T) {
	_, err := Read("/dev/zero", 1<<20)
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Size != -1 {
		t.Fatalf("/dev/zero: %v", err)
	}
	if !strings.HasPrefix(err.Error(), "/dev/zero: more than the 1 MiB limit") {
		t.Errorf("message %q", err)
	}

	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		w.Write([]byte(strings.Repeat("x", 3000)))
		w.Close()
	}()
	b, err := Read(fifo, 3000)
	if err != nil || len(b) != 3000 {
		t.Errorf("fifo: %d bytes, %v", len(b), err)
	}
}

func TestLines(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"a", []string{"a"}},
		{"a\n", []string{"a"}},
		{"a\nb", []string{"a", "b"}},
		{"a\r\nb\r\n", []string{"a", "b"}},
		{"a\n\nb\n", []string{"a", "", "b"}},
		{"\n", []string{""}},
	} {
		got, err := Lines(write(t, tc.in), 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(tc.want) {
			t.Errorf("%q: %q, want %q", tc.in, got, tc.want)
			continue
		}
		for i := range got {
			if string(got[i]) != tc.want[i] || cap(got[i]) != len(got[i]) {
				t.Errorf("%q: line %d = %q (cap %d), want %q", tc.in, i, got[i], cap(got[i]), tc.want[i])
			}
		}
	}
	if _, err := Lines(write(t, "abc\n"), 3); err == nil {
		t.Error("Lines ignored the limit")
	}
}

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"65536", 65536}, {"64k", 64 << 10}, {"64KiB", 64 << 10}, {"64 kb", 64 << 10}, {"64MiB", 64 << 20},
		{"1.5g", 3 << 29}, {"2GB", 2 << 30}, {"1t", 1 << 40}, {"100b", 100}, {"1e3", 1000},
	} {
		got, err := ParseSize(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "0", "-1", "x", "1x", "k", "NaN", "inf", "1e30g", "0.1"} {
		if n, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", bad, n)
		}
	}
	for n, want := range map[int64]string{100: "100 B", 64 << 10: "64 KiB", 64 << 20: "64 MiB", 3 << 29: "1.5 GiB"} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
}
