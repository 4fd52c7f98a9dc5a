//go:build linux

package target

import (
	"encoding/binary"
	"net/netip"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// listeningDiag adds to inodes the listening TCP sockets that accept
// connections to addr, asked of the kernel with sock_diag (NETLINK_SOCK_DIAG,
// the interface ss(8) uses), for listeners only: /proc/net/tcp lists every
// socket, TIME_WAIT ones included, and on a machine that just ran a load
// test (tens of thousands of them) the kernel takes tens of milliseconds to
// write it out. It reports false when the kernel cannot be asked (the
// caller then reads /proc/net/tcp). x/sys/unix has the constants but not
// the messages: they are laid out here as linux/inet_diag.h defines them.
func listeningDiag(addr netip.AddrPort, inodes map[string]bool) bool {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	for _, family := range []byte{unix.AF_INET, unix.AF_INET6} {
		if !diagDump(fd, family, addr, inodes) {
			return false
		}
	}
	return true
}

// Sizes of linux/inet_diag.h's messages.
const (
	sizeofDiagReq = 56 // struct inet_diag_req_v2
	sizeofDiagMsg = 72 // struct inet_diag_msg
)

// diagDump asks for family's TCP listeners and adds those on addr's port
// that accept connections to addr.
func diagDump(fd int, family byte, addr netip.AddrPort, inodes map[string]bool) bool {
	req := make([]byte, unix.SizeofNlMsghdr+sizeofDiagReq)
	ne := binary.NativeEndian
	ne.PutUint32(req[0:], uint32(len(req)))
	ne.PutUint16(req[4:], unix.SOCK_DIAG_BY_FAMILY)
	ne.PutUint16(req[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	r := req[unix.SizeofNlMsghdr:]
	r[0], r[1] = family, unix.IPPROTO_TCP
	ne.PutUint32(r[4:], 1<<10) // idiag_states: 1 << TCP_LISTEN
	binary.BigEndian.PutUint16(r[8:], addr.Port())
	if err := unix.Sendto(fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return false
	}
	buf := make([]byte, 32<<10)
	for {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err != nil {
			return false
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return false
		}
		for _, m := range msgs {
			switch m.Header.Type {
			case unix.NLMSG_DONE:
				return true
			case unix.NLMSG_ERROR:
				return false
			}
			if len(m.Data) < sizeofDiagMsg {
				continue
			}
			d := m.Data
			port := binary.BigEndian.Uint16(d[4:])
			var ip netip.Addr
			if d[0] == unix.AF_INET {
				ip = netip.AddrFrom4([4]byte(d[8:12]))
			} else {
				ip = netip.AddrFrom16([16]byte(d[8:24]))
			}
			if port == addr.Port() && (ip.Unmap() == addr.Addr().Unmap() || ip.IsUnspecified()) {
				inodes[strconv.FormatUint(uint64(ne.Uint32(d[68:])), 10)] = true
			}
		}
	}
}
