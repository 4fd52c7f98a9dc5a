package bodyfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The cgroup limits, v1 and v2, are read at the tightest of the process's
// cgroup and its ancestors; "max" and v1's unlimited (≈ 2⁶³) are no limit.
func TestCgroupRoom(t *testing.T) {
	t.Parallel()
	write := func(t *testing.T, root string, files map[string]string) {
		for name, v := range files {
			p := filepath.Join(root, name)
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, []byte(v), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tc := range []struct {
		name  string
		self  string
		files map[string]string
		room  int64
		limit string
		ok    bool
	}{
		{name: "v2", self: "0::/a/b\n", files: map[string]string{
			"a/b/memory.max": "max\n", "a/b/memory.current": "100\n",
			"a/memory.max": "1073741824\n", "a/memory.current": "73741824\n",
		}, room: 1000000000, limit: "the cgroup's memory.max (1 GiB)", ok: true},
		{name: "v2-unlimited", self: "0::/a\n", files: map[string]string{"a/memory.max": "max\n", "a/memory.current": "5\n"}},
		{name: "v1", self: "4:memory:/kube/pod\n0::/\n", files: map[string]string{
			"memory/kube/pod/memory.limit_in_bytes": "314572800\n", "memory/kube/pod/memory.usage_in_bytes": "14572800\n",
			"memory/memory.limit_in_bytes": "9223372036854771712\n", "memory/memory.usage_in_bytes": "1\n",
		}, room: 300000000, limit: "the cgroup's memory.limit_in_bytes (300 MiB)", ok: true},
		{name: "v1-unlimited", self: "4:memory:/x\n", files: map[string]string{
			"memory/x/memory.limit_in_bytes": "9223372036854771712\n", "memory/x/memory.usage_in_bytes": "1\n"}},
		{name: "no-cgroup-file", self: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			write(t, root, tc.files)
			self := filepath.Join(t.TempDir(), "cgroup")
			if tc.self != "" {
				os.WriteFile(self, []byte(tc.self), 0o644)
			}
			room, limit, ok := cgroupRoom(self, root)
			if ok != tc.ok || room != tc.room || limit != tc.limit {
				t.Errorf("room %d, %q, %v; want %d, %q, %v", room, limit, ok, tc.room, tc.limit, tc.ok)
			}
		})
	}
}

// A mapped file is the file: the same bytes, after room writable zero
// bytes, and a small file is read as before.
func TestMap(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	big := filepath.Join(dir, "big")
	want := []byte(strings.Repeat("0123456789abcdef", MapAt/16+100))
	os.WriteFile(big, want, 0o644)
	for _, room := range []int{0, 5, 4096, 5000} {
		b, err := Map(big, 0, room)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) != room+len(want) || string(b[room:]) != string(want) {
			t.Fatalf("room %d: %d bytes, want %d", room, len(b), room+len(want))
		}
		for i := range room {
			if b[i] != 0 {
				t.Fatalf("room %d: byte %d is %d", room, i, b[i])
			}
			b[i] = 'x' // the room is writable
		}
	}
	small := filepath.Join(dir, "small")
	os.WriteFile(small, []byte("hello"), 0o644)
	if b, err := Map(small, 0, 5); err != nil || string(b) != "\x00\x00\x00\x00\x00hello" {
		t.Errorf("small: %q, %v", b, err)
	}
}

// A file that does not fit the memory left is refused with one line naming
// the file, its size, what it needs and the limit that binds.
func TestNoRoom(t *testing.T) {
	t.Parallel()
	l := memLimit{name: "ulimit -v (1 GiB)", room: 600 << 20, virtual: true}
	if got := l.largest(1); got != 88<<20 {
		t.Errorf("largest under ulimit -v: %d", got)
	}
	l = memLimit{name: "the cgroup's memory.max (300 MiB)", room: 300 << 20}
	if got := l.largest(1); got != 208<<20 { // 1.25 × 208 + 40 = 300
		t.Errorf("largest under the cgroup: %d MiB", got>>20)
	}
	e := &NoRoomError{Path: "body", Size: 256 << 20, Need: Cost(256<<20, 1), Room: 300 << 20, Limit: "the cgroup's memory.max (300 MiB)"}
	if want := "body: 256 MiB needs 360 MiB of memory (the file and the run) and the cgroup's memory.max (300 MiB) leaves 300 MiB: use a smaller file, or give hail more memory"; e.Error() != want {
		t.Errorf("message %q", e)
	}
	var nr *NoRoomError
	if !errors.As(error(e), &nr) {
		t.Fatal("not a NoRoomError")
	}
}
