//go:build linux

package uring

import (
	"bytes"
	"errors"
	"net"
	"net/netip"
	"os"
	"sync"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

func mustAddrPort(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }

// startEchoServer runs a std-net echo server on 127.0.0.1:0 until cleanup.
func startEchoServer(t *testing.T) netip.AddrPort {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns []net.Conn
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				// A plain loop, not io.Copy: TCP-to-TCP io.Copy splices
				// through cached pipes, which would muddle fd counting.
				buf := make([]byte, 4096)
				for {
					n, err := c.Read(buf)
					if n > 0 {
						if _, werr := c.Write(buf[:n]); werr != nil {
							break
						}
					}
					if err != nil {
						break
					}
				}
				c.Close()
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return netip.MustParseAddrPort(ln.Addr().String())
}

type echoMode int

const (
	modePlain        echoMode = iota // unix.Socket fds, send/recv, close via ring
	modeFixed                        // sparse registered table + UpdateFiles, IOSQE_FIXED_FILE
	modeSocketDirect                 // sockets created by the ring straight into fixed slots
	modeMultishot                    // multishot recv from a provided buffer ring
)

const (
	opConnect = iota + 1
	opSend
	opRecv
	opMRecv
	opCancel
	opClose
	opSocket
)

func ud(conn, op int) uint64      { return uint64(conn)<<8 | uint64(op) }
func splitUD(u uint64) (int, int) { return int(u >> 8), int(u & 0xff) }

type echoConn struct {
	fd       int32 // fd, or fixed slot
	seq      int
	msgLen   int
	sent     int
	recvd    int
	sendDone bool
	busy     bool
	armed    bool // multishot recv armed
	sbuf     []byte
	rbuf     []byte
}

func fillMsg(b []byte, conn, seq int) int {
	n := 16 + (seq*13+conn)%(len(b)-16)
	for j := 0; j < n; j++ {
		b[j] = byte(conn*7 + seq*31 + j)
	}
	return n
}

func TestEchoPlain(t *testing.T)        { runEcho(t, modePlain) }
func TestEchoFixedFiles(t *testing.T)   { runEcho(t, modeFixed) }
func TestEchoSocketDirect(t *testing.T) { runEcho(t, modeSocketDirect) }
func TestEchoMultishot(t *testing.T)    { runEcho(t, modeMultishot) }

func runEcho(t *testing.T, mode echoMode) {
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
	t.Cleanup(func() { arena.Close() }) // after the ring (cleanups run LIFO)
	r := newTestRing(t, 256, &Options{CQEntries: 1024})
	fixed := mode == modeFixed || mode == modeSocketDirect
	fdsBefore := countFDs(t)

	sa, saLen, err := arena.Sockaddr(srv)
	if err != nil {
		t.Fatal(err)
	}
	conns := make([]*echoConn, nconn)
	for i := range conns {
		conns[i] = &echoConn{sbuf: arena.Alloc(maxMsg), rbuf: arena.Alloc(maxMsg)}
	}

	var br *BufRing
	if mode == modeMultishot {
		br, err = r.NewBufRing(7, 256, 4096)
		if errors.Is(err, errors.ErrUnsupported) {
			t.Skip(err)
		}
		if err != nil {
			t.Fatal(err)
		}
	}

	expect := func(cqes []CQE, op int, res int32) {
		t.Helper()
		for _, c := range cqes {
			if _, o := splitUD(c.UserData); o != op || c.Res != res {
				t.Fatalf("op %d: cqe %+v, want res %d", op, c, res)
			}
		}
	}

	// Sockets.
	var osFDs []int32
	switch mode {
	case modeSocketDirect:
		if !r.Supports(OpSocket) {
			t.Skip("kernel lacks IORING_OP_SOCKET")
		}
		if err := r.RegisterFilesSparse(nconn); err != nil {
			t.Fatal(err)
		}
		for i, c := range conns {
			c.fd = int32(i)
			sqe := r.GetSQE()
			sqe.PrepSocketDirect(unix.AF_INET, unix.SOCK_STREAM, 0, uint32(i))
			sqe.SetUserData(ud(i, opSocket))
		}
		expect(waitCQEs(t, r, nconn, 5*time.Second), opSocket, 0)
	default:
		for _, c := range conns {
			fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
			c.fd = int32(fd)
			osFDs = append(osFDs, int32(fd))
		}
		if mode == modeFixed {
			sparse := make([]int32, nconn)
			for i := range sparse {
				sparse[i] = -1
			}
			if err := r.RegisterFiles(sparse); err != nil {
				t.Fatal(err)
			}
			if n, err := r.UpdateFiles(0, osFDs); err != nil || n != nconn {
				t.Fatalf("UpdateFiles = %d, %v", n, err)
			}
			// The table holds its own references: close our fds now.
			for i, c := range conns {
				unix.Close(int(osFDs[i]))
				c.fd = int32(i)
			}
		}
	}

	// Connect through the ring; sa stays alive in the arena until all CQEs.
	for i, c := range conns {
		sqe := r.GetSQE()
		sqe.PrepConnect(c.fd, sa, saLen)
		if fixed {
			sqe.SetFlags(SQEFixedFile)
		}
		sqe.SetUserData(ud(i, opConnect))
	}
	expect(waitCQEs(t, r, nconn, 5*time.Second), opConnect, 0)

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
		if fixed {
			sqe.SetFlags(SQEFixedFile)
		}
		return sqe
	}
	postSend := func(i int) {
		c := conns[i]
		sqe := getSQE()
		sqe.PrepSend(c.fd, unsafe.Pointer(&c.sbuf[c.sent]), uint32(c.msgLen-c.sent), unix.MSG_NOSIGNAL)
		sqe.SetUserData(ud(i, opSend))
	}
	postRecv := func(i int) {
		c := conns[i]
		sqe := getSQE()
		sqe.PrepRecv(c.fd, unsafe.Pointer(&c.rbuf[c.recvd]), uint32(c.msgLen-c.recvd), 0)
		sqe.SetUserData(ud(i, opRecv))
	}
	armMultishot := func(i int) {
		sqe := getSQE()
		sqe.PrepRecvMultishot(conns[i].fd, br.Group(), 0)
		sqe.SetUserData(ud(i, opMRecv))
		conns[i].armed = true
	}

	started, completed, byteCount := 0, 0, 0
	start := func(i int) {
		c := conns[i]
		c.seq = started
		started++
		c.msgLen = fillMsg(c.sbuf, i, c.seq)
		c.sent, c.recvd, c.sendDone, c.busy = 0, 0, false, true
		postSend(i)
		if mode != modeMultishot {
			postRecv(i)
		}
	}
	finishIfDone := func(i int) {
		c := conns[i]
		if !c.busy || !c.sendDone || c.recvd < c.msgLen {
			return
		}
		if !bytes.Equal(c.rbuf[:c.msgLen], c.sbuf[:c.msgLen]) {
			t.Fatalf("conn %d seq %d: echoed bytes differ", i, c.seq)
		}
		byteCount += c.msgLen
		completed++
		c.busy = false
		if started < total {
			start(i)
		}
	}

	if mode == modeMultishot {
		for i := range conns {
			armMultishot(i)
		}
	}
	for i := range conns {
		start(i)
	}

	var cqes [256]CQE
	deadline := time.Now().Add(20 * time.Second)
	enters0, _ := r.Stats()
	batches := 0
	for completed < total {
		if time.Now().After(deadline) {
			t.Fatalf("stalled: %d/%d round trips", completed, total)
		}
		if _, err := r.SubmitAndWaitTimeout(1, 5*time.Second); err != nil {
			t.Fatalf("SubmitAndWaitTimeout after %d round trips: %v", completed, err)
		}
		batches++
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
				c.sendDone = true
				finishIfDone(i)
			case opRecv:
				if cqe.Res <= 0 {
					t.Fatalf("conn %d recv: res %d", i, cqe.Res)
				}
				c.recvd += int(cqe.Res)
				if c.recvd < c.msgLen {
					postRecv(i) // short read: read the rest
					continue
				}
				finishIfDone(i)
			case opMRecv:
				if !cqe.More() {
					c.armed = false
				}
				switch {
				case cqe.Res > 0:
					if !cqe.HasBuffer() {
						t.Fatalf("multishot cqe without buffer: %+v", cqe)
					}
					data := br.Buf(cqe.BufferID())[:cqe.Res]
					if !c.busy || c.recvd+len(data) > c.msgLen {
						t.Fatalf("conn %d: %d unexpected bytes", i, len(data))
					}
					copy(c.rbuf[c.recvd:], data)
					c.recvd += len(data)
					br.Recycle(cqe.BufferID())
				case cqe.Res == -int32(unix.ENOBUFS):
					// Group ran dry; re-armed below.
				default:
					t.Fatalf("conn %d multishot recv: %+v", i, cqe)
				}
				if !c.armed {
					armMultishot(i)
				}
				finishIfDone(i)
			default:
				t.Fatalf("unexpected cqe %+v", cqe)
			}
		}
	}
	enters1, _ := r.Stats()
	t.Logf("mode %d: %d round trips, %d bytes echoed, %d batches, %d io_uring_enter calls",
		mode, completed, byteCount, batches, enters1-enters0)

	// Tear down through the ring.
	if mode == modeMultishot {
		for i := range conns {
			sqe := getSQE()
			sqe.PrepCancel(ud(i, opMRecv), 0)
			sqe.SetUserData(ud(i, opCancel))
		}
		var cancelOK, recvCanceled int
		for _, c := range waitCQEs(t, r, 2*nconn, 5*time.Second) {
			_, op := splitUD(c.UserData)
			switch {
			case op == opCancel && c.Res == 0:
				cancelOK++
			case op == opMRecv && c.Res == -int32(unix.ECANCELED) && !c.More():
				recvCanceled++
			default:
				t.Errorf("teardown cqe %+v", c)
			}
		}
		if cancelOK != nconn || recvCanceled != nconn {
			t.Fatalf("cancel ok %d, recv cancelled %d", cancelOK, recvCanceled)
		}
	}
	switch mode {
	case modePlain, modeMultishot:
		for i, c := range conns {
			sqe := r.GetSQE()
			sqe.PrepClose(c.fd)
			sqe.SetUserData(ud(i, opClose))
		}
		expect(waitCQEs(t, r, nconn, 5*time.Second), opClose, 0)
	case modeSocketDirect:
		for i := range conns {
			sqe := r.GetSQE()
			sqe.PrepCloseDirect(uint32(i))
			sqe.SetUserData(ud(i, opClose))
		}
		expect(waitCQEs(t, r, nconn, 5*time.Second), opClose, 0)
	case modeFixed:
		if err := r.UnregisterFiles(); err != nil {
			t.Fatal(err)
		}
	}
	// Server-side conns close asynchronously once they see EOF.
	for wait := time.Now().Add(3 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		after := countFDs(t)
		if after == fdsBefore {
			break
		}
		if time.Now().After(wait) {
			t.Errorf("fds: %d before sockets, %d after closing them", fdsBefore, after)
			ents, _ := os.ReadDir("/proc/self/fd")
			for _, e := range ents {
				l, _ := os.Readlink("/proc/self/fd/" + e.Name())
				t.Logf("fd %s -> %s", e.Name(), l)
			}
			break
		}
	}
}
