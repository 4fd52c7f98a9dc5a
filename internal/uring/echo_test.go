//go:build linux

package uring

import (
	"bytes"
	"net"
	"net/netip"
	"os"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/hail-loadgen/hail/internal/testnet"
)

// startEchoServer runs a std-net echo server on 127.0.0.1:0 until cleanup.
func startEchoServer(t *testing.T) netip.AddrPort {
	t.Helper()
	return netip.MustParseAddrPort(testnet.Serve(t, "127.0.0.1:0", func(c net.Conn) {
		// A plain loop, not io.Copy: TCP-to-TCP io.Copy splices
		// through cached pipes, which would muddle fd counting.
		buf := make([]byte, 4096)
		for {
			n, err := c.Read(buf)
			if n > 0 {
				if _, werr := c.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}))
}

// sockaddr4 writes ap as a raw sockaddr_in into arena memory, where it
// stays valid for as long as connects read it.
func sockaddr4(t *testing.T, a *Arena, ap netip.AddrPort) (unsafe.Pointer, uint32) {
	t.Helper()
	b := a.Alloc(unix.SizeofSockaddrInet4)
	if b == nil {
		t.Fatal("arena exhausted")
	}
	sa := (*unix.RawSockaddrInet4)(unsafe.Pointer(&b[0]))
	sa.Family = unix.AF_INET
	sa.Addr = ap.Addr().As4()
	b[2], b[3] = byte(ap.Port()>>8), byte(ap.Port()) // network byte order
	return unsafe.Pointer(sa), unix.SizeofSockaddrInet4
}

// Operations of the echo client, in the low byte of user_data.
const (
	opConnect = iota + 1
	opSend
	opRecv
	opShutdown
	opClose
)

func ud(conn, op int) uint64      { return uint64(conn)<<8 | uint64(op) }
func splitUD(u uint64) (int, int) { return int(u >> 8), int(u & 0xff) }

type echoConn struct {
	fd     int32
	seq    int
	msgLen int
	sent   int
	recvd  int
	busy   bool
	armed  bool // multishot receive armed
	sbuf   []byte
	rbuf   []byte
}

func fillMsg(b []byte, conn, seq int) int {
	n := 16 + (seq*13+conn)%(len(b)-16)
	for j := range n {
		b[j] = byte(conn*7 + seq*31 + j)
	}
	return n
}

// TestEcho is a TCP client on the ring, built as the uring engine is:
// sockets connected through the ring to a sockaddr in arena memory, sends
// from arena memory, one multishot receive per connection into a shared
// provided buffer ring recycled in batches, and a hard-linked shutdown and
// close at the end. 64 connections make 1,000 round trips of varied sizes
// to a std-net echo server, every byte is compared, and every socket is
// closed afterwards.
func TestEcho(t *testing.T) {
	const (
		nconn  = 64
		total  = 1000
		maxMsg = 128
	)
	lockThread(t)
	srv := startEchoServer(t)
	arena, err := NewArena(1 << 16)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { arena.Close() }) // after the ring's (cleanups run last first)
	r := newTestRing(t, 256, &Options{CQEntries: 1024})
	br := newTestBufRing(t, r, 7, 256, 4096)
	fdsBefore := countFDs(t)

	sa, saLen := sockaddr4(t, arena, srv)
	conns := make([]*echoConn, nconn)
	for i := range conns {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
		conns[i] = &echoConn{fd: int32(fd), sbuf: arena.Alloc(maxMsg), rbuf: arena.Alloc(maxMsg)}
	}

	getSQE := func() *SQE {
		sqe := r.GetSQE()
		if sqe == nil {
			if _, err := r.Submit(); err != nil {
				t.Fatal(err)
			}
			if sqe = r.GetSQE(); sqe == nil {
				t.Fatal("SQ full after submit")
			}
		}
		return sqe
	}
	for i, c := range conns {
		sqe := getSQE()
		sqe.PrepConnect(c.fd, sa, saLen)
		sqe.SetUserData(ud(i, opConnect))
	}
	for _, c := range waitCQEs(t, r, nconn, 5*time.Second) {
		if _, op := splitUD(c.UserData); op != opConnect || c.Res != 0 {
			t.Fatalf("connect: %+v", c)
		}
	}

	postSend := func(i int) {
		c := conns[i]
		sqe := getSQE()
		sqe.PrepSend(c.fd, unsafe.Pointer(&c.sbuf[c.sent]), uint32(c.msgLen-c.sent), unix.MSG_NOSIGNAL)
		sqe.SetUserData(ud(i, opSend))
	}
	arm := func(i int) {
		sqe := getSQE()
		prepRecv(sqe, conns[i].fd, br.Group())
		sqe.SetUserData(ud(i, opRecv))
		conns[i].armed = true
	}
	started, completed, rearmed := 0, 0, 0
	start := func(i int) {
		c := conns[i]
		c.seq = started
		started++
		c.msgLen = fillMsg(c.sbuf, i, c.seq)
		c.sent, c.recvd, c.busy = 0, 0, true
		postSend(i)
	}
	finishIfDone := func(i int) {
		c := conns[i]
		if !c.busy || c.sent < c.msgLen || c.recvd < c.msgLen {
			return
		}
		if !bytes.Equal(c.rbuf[:c.msgLen], c.sbuf[:c.msgLen]) {
			t.Fatalf("conn %d seq %d: echoed bytes differ", i, c.seq)
		}
		completed++
		c.busy = false
		if started < total {
			start(i)
		}
	}
	for i := range conns {
		arm(i)
		start(i)
	}

	var cqes [256]CQE
	deadline := time.Now().Add(20 * time.Second)
	for completed < total {
		if time.Now().After(deadline) {
			t.Fatalf("stalled: %d/%d round trips", completed, total)
		}
		if _, err := r.SubmitAndWaitTimeout(1, 5*time.Second); err != nil {
			t.Fatalf("SubmitAndWaitTimeout after %d round trips: %v", completed, err)
		}
		n := r.PeekCQEs(cqes[:])
		for _, cqe := range cqes[:n] {
			i, op := splitUD(cqe.UserData)
			c := conns[i]
			switch op {
			case opSend:
				if cqe.Res <= 0 {
					t.Fatalf("conn %d send: res %d", i, cqe.Res)
				}
				c.sent += int(cqe.Res)
				if c.sent < c.msgLen {
					postSend(i) // short send: send the rest
					continue
				}
			case opRecv:
				c.armed = cqe.More()
				switch {
				case cqe.Res > 0:
					if !cqe.HasBuffer() {
						t.Fatalf("multishot cqe without buffer: %+v", cqe)
					}
					data := received(br, cqe)
					if !c.busy || c.recvd+len(data) > c.msgLen {
						t.Fatalf("conn %d: %d unexpected bytes", i, len(data))
					}
					copy(c.rbuf[c.recvd:], data)
					c.recvd += len(data)
					br.Add(cqe.BufferID())
				case cqe.Res == -int32(unix.ENOBUFS):
					// The group ran dry; re-armed below. With 256 buffers for
					// 64 connections that is rare unless recycling fails.
					if rearmed++; rearmed > 4*nconn {
						t.Fatalf("the buffer group ran dry %d times: buffers are not recycled", rearmed)
					}
				default:
					t.Fatalf("conn %d multishot receive: %+v", i, cqe)
				}
				if !c.armed {
					arm(i)
				}
			default:
				t.Fatalf("unexpected cqe %+v", cqe)
			}
			finishIfDone(i)
		}
		br.Advance() // one publication per batch
	}
	t.Logf("%d round trips, %d receives re-armed after the group ran dry", completed, rearmed)

	// Tear down as the engine does: the shutdown ends the armed receive
	// (EOF), the hard-linked close runs after it.
	for i, c := range conns {
		sqe := getSQE()
		sqe.PrepShutdown(c.fd, unix.SHUT_RDWR)
		sqe.SetFlags(SQEIOHardlink)
		sqe.SetUserData(ud(i, opShutdown))
		sqe = getSQE()
		sqe.PrepClose(c.fd)
		sqe.SetUserData(ud(i, opClose))
	}
	counts := map[int]int{}
	for _, c := range waitCQEs(t, r, 3*nconn, 5*time.Second) {
		_, op := splitUD(c.UserData)
		eof := op == opRecv && !c.More() && c.Res >= 0 && len(received(br, c)) == 0 // the end: a header, no payload
		if (op != opRecv && c.Res != 0) || (op == opRecv && !eof) {
			t.Errorf("teardown cqe %+v", c)
		}
		counts[op]++
	}
	if counts[opRecv] != nconn || counts[opShutdown] != nconn || counts[opClose] != nconn {
		t.Fatalf("teardown completions %v, want %d of each", counts, nconn)
	}
	// Server-side conns close asynchronously once they see EOF.
	for wait := time.Now().Add(3 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		after := countFDs(t)
		if after == fdsBefore {
			break
		}
		if time.Now().After(wait) {
			t.Errorf("fds: %d before the sockets, %d after closing them", fdsBefore, after)
			ents, _ := os.ReadDir("/proc/self/fd")
			for _, e := range ents {
				l, _ := os.Readlink("/proc/self/fd/" + e.Name())
				t.Logf("fd %s -> %s", e.Name(), l)
			}
			break
		}
	}
}

// TestAllocsPerCycle: the calls of the engine's hot path allocate nothing:
// queueing a send, a bounded wait, copying completions out, and giving a
// receive buffer back.
func TestAllocsPerCycle(t *testing.T) {
	lockThread(t)
	r := newTestRing(t, 16, nil)
	br := newTestBufRing(t, r, 0, 8, 64)
	fds := socketPair(t, unix.SOCK_STREAM)
	a, err := NewArena(4096)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	sbuf := a.Alloc(64)
	sqe := r.GetSQE()
	prepRecv(sqe, int32(fds[1]), br.Group())
	sqe.SetUserData(2)
	var cqes [8]CQE
	bad, got := 0, 0
	cycle := func() {
		if bad > 0 {
			return // one failure is enough; do not wait out the rest
		}
		s := r.GetSQE()
		s.PrepSend(int32(fds[0]), unsafe.Pointer(&sbuf[0]), 64, 0)
		s.SetUserData(1)
		sent := false
		for deadline := time.Now().Add(time.Second); !sent || got < 64; {
			if _, err := r.SubmitAndWaitTimeout(1, time.Until(deadline)); err != nil {
				bad++
				return
			}
			n := r.PeekCQEs(cqes[:])
			for _, c := range cqes[:n] {
				switch {
				case c.UserData == 1 && c.Res == 64:
					sent = true
				case c.UserData == 2 && c.Res > 0 && c.More():
					got += len(received(br, c))
					br.Add(c.BufferID())
				default:
					bad++
					return
				}
			}
			br.Advance()
		}
		got -= 64
	}
	if n := testing.AllocsPerRun(200, cycle); n != 0 {
		t.Errorf("send/receive/complete cycle allocates %v times", n)
	}
	if bad != 0 {
		t.Fatalf("%d bad cycles", bad)
	}
}

// BenchmarkSendRecv is one send and its multishot receive per iteration, on
// a socket pair: the ring's own cost per request.
func BenchmarkSendRecv(b *testing.B) {
	lockThread(b)
	r := newTestRing(b, 64, nil)
	br, err := r.NewBufRing(0, 64, 256)
	if err != nil {
		b.Skip(err)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	a, err := NewArena(4096)
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	msg := a.Alloc(64)
	sqe := r.GetSQE()
	prepRecv(sqe, int32(fds[1]), br.Group())
	sqe.SetUserData(2)
	var cqes [16]CQE
	pending := 0
	b.ReportAllocs()
	for b.Loop() {
		s := r.GetSQE()
		s.PrepSend(int32(fds[0]), unsafe.Pointer(&msg[0]), 64, 0)
		s.SetUserData(1)
		pending += 64 + 1
		for pending > 0 {
			if _, err := r.SubmitAndWaitTimeout(1, time.Second); err != nil {
				b.Fatal(err)
			}
			n := r.PeekCQEs(cqes[:])
			for _, c := range cqes[:n] {
				if c.UserData == 1 {
					pending--
				} else {
					if !c.More() {
						b.Fatalf("receive ended: %+v", c)
					}
					pending -= len(received(br, c))
					br.Add(c.BufferID())
				}
			}
			br.Advance()
		}
	}
}
