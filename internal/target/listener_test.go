package target

import (
	"maps"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// The process listening on a loopback port is found: this test's own,
// whose listener it opens; a free port has none.
func TestListenerFindsItsProcess(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/net/tcp"); err != nil {
		t.Skip("no /proc/net/tcp here")
	}
	for _, network := range []string{"tcp4", "tcp6"} {
		ln, err := net.Listen(network, map[string]string{"tcp4": "127.0.0.1:0", "tcp6": "[::1]:0"}[network])
		if err != nil {
			t.Skipf("%s: %v", network, err)
		}
		addr := netip.MustParseAddrPort(ln.Addr().String())
		pid, ok := Listener(addr)
		if !ok || pid != os.Getpid() {
			t.Errorf("%s %s: listener pid %d (%v), want this process's %d", network, addr, pid, ok, os.Getpid())
		}
		ln.Close()
		// Closed, it is not found as this process's (another test process
		// running beside this one may have been given the freed port).
		if pid, ok := Listener(addr); ok && pid == os.Getpid() {
			t.Errorf("%s %s: closed, still found as this process's (pid %d)", network, addr, pid)
		}
	}
}

// A wildcard listener serves a loopback target; the table's addresses are
// the kernel's words in host order.
func TestListenerTable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mkdir := func(p string) {
		if err := os.MkdirAll(filepath.Join(dir, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mkdir("net")
	mkdir("42/fd")
	mkdir("7/fd")
	tcp := "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n" +
		"   0: 0100007F:1F90 00000000:0000 01 00000000:00000000 00:00000000 00000000     0        0 111 1\n" + // established, not a listener
		"   1: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 222 1\n" +
		"   2: 0100007F:0050 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 333 1\n"
	if err := os.WriteFile(filepath.Join(dir, "net/tcp"), []byte(tcp), 0o644); err != nil {
		t.Fatal(err)
	}
	for pid, ino := range map[string]string{"42": "222", "7": "333"} {
		if err := os.Symlink("socket:["+ino+"]", filepath.Join(dir, pid, "fd", "3")); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		addr string
		pid  int
	}{{"127.0.0.1:8080", 42}, {"127.0.0.1:80", 7}, {"127.0.0.1:81", 0}} {
		pid, ok := listenerAt(dir, netip.MustParseAddrPort(tc.addr), nil)
		if pid != tc.pid || ok != (tc.pid != 0) {
			t.Errorf("%s: pid %d (%v), want %d", tc.addr, pid, ok, tc.pid)
		}
	}
	if a, ok := parseProcAddr("00000000000000000000000001000000:1F90"); !ok || a.String() != "[::1]:8080" {
		t.Errorf("v6 loopback parsed as %s (%v)", a, ok)
	}
}

// A process's first descriptors are read first, all processes' before the
// rest of any: a process holding the socket among its first 64 is named
// before a lower pid holding it further on, and a socket held only beyond
// the first 64 is still found.
func TestListenerFirstDescriptorsFirst(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tcp := "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n" +
		"   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 222 1\n" +
		"   1: 0100007F:0050 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 333 1\n"
	if err := os.MkdirAll(filepath.Join(dir, "net"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "net/tcp"), []byte(tcp), 0o644); err != nil {
		t.Fatal(err)
	}
	// pid 5: 200 connections (fds 3–202), socket 222 at fd 150 and 333 at
	// fd 190; pid 9: socket 222 at fd 3.
	fds := map[string]map[int]string{"5": {}, "9": {3: "222"}}
	for fd := 3; fd < 203; fd++ {
		fds["5"][fd] = strconv.Itoa(1000 + fd)
	}
	fds["5"][150], fds["5"][190] = "222", "333"
	for pid, m := range fds {
		if err := os.MkdirAll(filepath.Join(dir, pid, "fd"), 0o755); err != nil {
			t.Fatal(err)
		}
		for fd, ino := range m {
			if err := os.Symlink("socket:["+ino+"]", filepath.Join(dir, pid, "fd", strconv.Itoa(fd))); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tc := range []struct {
		addr string
		pid  int
	}{{"127.0.0.1:8080", 9}, {"127.0.0.1:80", 5}} {
		if pid, ok := listenerAt(dir, netip.MustParseAddrPort(tc.addr), nil); pid != tc.pid || !ok {
			t.Errorf("%s: pid %d (%v), want %d", tc.addr, pid, ok, tc.pid)
		}
	}
	if found, last := holds(dir, 5, map[string]bool{"333": true}, -1, firstFDs); found || last != 3+firstFDs-1 {
		t.Errorf("pid 5's first %d descriptors: found %v, last read %d, want false and %d", firstFDs, found, last, 3+firstFDs-1)
	}
	if found, last := holds(dir, 9, map[string]bool{"333": true}, -1, firstFDs); found || last != -1 {
		t.Errorf("pid 9's one descriptor: found %v, last read %d, want false and -1 (all read)", found, last)
	}
}

// FuzzParseProcAddr: any /proc/net/tcp address field parses or is
// refused, never a panic; what parses prints back to the same address.
func FuzzParseProcAddr(f *testing.F) {
	f.Add("0100007F:1F90")
	f.Add("00000000000000000000000001000000:0050")
	f.Add("zz:1")
	f.Fuzz(func(t *testing.T, s string) {
		if a, ok := parseProcAddr(s); ok && !a.IsValid() {
			t.Errorf("%q parsed as the invalid %v", s, a)
		}
	})
}

// sock_diag and /proc/net/tcp name the same listening sockets.
func TestDiagAgreesWithProc(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/net/tcp"); err != nil {
		t.Skip("no /proc/net/tcp here")
	}
	for _, bind := range []string{"127.0.0.1:0", "[::1]:0", ":0"} {
		ln, err := net.Listen("tcp", bind)
		if err != nil {
			t.Skipf("%s: %v", bind, err)
		}
		port := netip.MustParseAddrPort(ln.Addr().String()).Port()
		addr := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), port)
		if bind == "[::1]:0" {
			addr = netip.AddrPortFrom(netip.IPv6Loopback(), port)
		}
		fromDiag, fromProc := map[string]bool{}, map[string]bool{}
		if !listeningDiag(addr, fromDiag) {
			t.Skip("sock_diag cannot be asked here")
		}
		for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
			listening(f, addr, fromProc)
		}
		if len(fromDiag) != 1 || len(fromProc) != 1 || !maps.Equal(fromDiag, fromProc) {
			t.Errorf("%s: sock_diag found %v, /proc/net/tcp %v", bind, fromDiag, fromProc)
		}
		ln.Close()
	}
}
