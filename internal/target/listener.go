package target

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Listener finds the process listening on addr, a TCP address on this
// machine (a loopback target): the listening socket's inode from the
// kernel's sock_diag (or /proc/net/tcp and tcp6), then the process holding a descriptor of it in
// /proc/PID/fd. It reports false when none is found: nothing listens
// there, the listener is in another network namespace, or its process's
// descriptors cannot be read (another user's, without privileges). A
// socket shared by several processes (a pre-forked server) names the
// lowest pid among those holding it in their first 64 descriptors (a
// listening socket is nearly always there), else the lowest of the rest.
func Listener(addr netip.AddrPort) (pid int, ok bool) {
	return listenerAt("/proc", addr, listeningDiag)
}

// listenerAt is Listener with proc as /proc; the listening sockets come
// from diag when it can tell (nil: from proc's net/tcp tables).
func listenerAt(proc string, addr netip.AddrPort, diag func(netip.AddrPort, map[string]bool) bool) (int, bool) {
	inodes := map[string]bool{}
	if diag == nil || !diag(addr, inodes) {
		for _, f := range []string{"net/tcp", "net/tcp6"} {
			listening(filepath.Join(proc, f), addr, inodes)
		}
	}
	if len(inodes) == 0 {
		return 0, false
	}
	all, err := pids(proc)
	if err != nil {
		return 0, false
	}
	// In pid order, the first holder is the lowest pid: the scan stops
	// there, never reading the descriptors of the processes after it. A
	// listening socket is nearly always among its process's first
	// descriptors (opened at its start, before its connections), so the
	// first pass reads each process's first firstFDs descriptors and only
	// then a second pass the rest: a process of thousands of connections
	// (a proxy, another load generator, a test suite) costs firstFDs
	// readlinks, not thousands, unless no process holds the socket among
	// its first ones.
	slices.Sort(all)
	read := make([]int, len(all)) // per process, the highest descriptor the first pass read; -1: it read them all
	for i, pid := range all {
		found, last := holds(proc, pid, inodes, -1, firstFDs)
		if found {
			return pid, true
		}
		read[i] = last
	}
	for i, pid := range all {
		if read[i] < 0 {
			continue
		}
		if found, _ := holds(proc, pid, inodes, read[i], 0); found {
			return pid, true
		}
	}
	return 0, false
}

// firstFDs is how many of each process's descriptors Listener's first
// pass reads.
const firstFDs = 64

// holds reports whether process pid (under proc) holds a descriptor of one
// of inodes, reading in numeric order its descriptors numbered above
// after, at most limit of them (0: no limit). last is the highest it read
// when the limit left some unread, else -1.
func holds(proc string, pid int, inodes map[string]bool, after, limit int) (found bool, last int) {
	dir := filepath.Join(proc, strconv.Itoa(pid), "fd")
	f, err := os.Open(dir)
	if err != nil {
		return false, -1
	}
	names, _ := f.Readdirnames(-1)
	f.Close()
	fds := make([]int, 0, len(names))
	for _, name := range names {
		if fd, err := strconv.Atoi(name); err == nil && fd > after {
			fds = append(fds, fd)
		}
	}
	slices.Sort(fds)
	last = -1
	for i, fd := range fds {
		if limit > 0 && i == limit {
			return false, last
		}
		last = fd
		link, err := os.Readlink(filepath.Join(dir, strconv.Itoa(fd)))
		if err != nil {
			continue
		}
		if ino, ok := strings.CutPrefix(link, "socket:["); ok && inodes[strings.TrimSuffix(ino, "]")] {
			return true, fd
		}
	}
	return false, -1
}

// listening adds to inodes the listening sockets of a /proc/net/tcp{,6}
// table that accept connections to addr: bound to its address, or to the
// wildcard address of its family (an IPv4 target also reaches a v6
// wildcard listener that accepts v4-mapped connections).
func listening(table string, addr netip.AddrPort, inodes map[string]bool) {
	b, err := os.ReadFile(table)
	if err != nil {
		return
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Scan() // the header
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[3] != "0A" { // 0A: TCP_LISTEN
			continue
		}
		local, ok := parseProcAddr(f[1])
		if !ok || local.Port() != addr.Port() {
			continue
		}
		ip, want := local.Addr(), addr.Addr().Unmap()
		if ip.Unmap() == want || ip.IsUnspecified() {
			inodes[f[9]] = true
		}
	}
}

// parseProcAddr parses a /proc/net/tcp address, "0100007F:1F90": the IP
// as the kernel's 32-bit words in host (little-endian) order, hex, then
// the port.
func parseProcAddr(s string) (netip.AddrPort, bool) {
	ipHex, portHex, ok := strings.Cut(s, ":")
	if !ok {
		return netip.AddrPort{}, false
	}
	raw, err := hex.DecodeString(ipHex)
	port, perr := strconv.ParseUint(portHex, 16, 16)
	if err != nil || perr != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.AddrPort{}, false
	}
	for i := 0; i < len(raw); i += 4 { // each word's bytes as the machine holds them: network order
		binary.NativeEndian.PutUint32(raw[i:], binary.BigEndian.Uint32(raw[i:]))
	}
	ip, _ := netip.AddrFromSlice(raw)
	return netip.AddrPortFrom(ip, uint16(port)), true
}
