//go:build linux

package uring

import (
	"net"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A multishot recvmsg delivers each chunk with the kernel's receive time
// (SO_TIMESTAMPNS), which Recvmsg and RxTime take apart.
func TestRecvmsgMultishotTimestamps(t *testing.T) {
	lockThread(t)
	r := newTestRing(t, 8, nil)
	br := newTestBufRing(t, r, 3, 8, 512)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	f, err := client.(*net.TCPConn).File()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fd := int32(f.Fd())
	if err := unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1); err != nil {
		t.Fatal(err)
	}
	// The kernel turns receive timestamps on for the whole stack in the
	// background (a static key flipped by a work item): give it a moment.
	time.Sleep(20 * time.Millisecond)
	a, err := NewArena(256)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	msg := (*unix.Msghdr)(unsafe.Pointer(&a.Alloc(int(unsafe.Sizeof(unix.Msghdr{})))[0]))
	msg.Controllen = uint64(unix.CmsgSpace(16))
	sqe := r.GetSQE()
	sqe.PrepRecvmsgMultishot(fd, msg, br.Group())
	sqe.SetUserData(7)
	if _, err := r.Submit(); err != nil {
		t.Fatal(err)
	}
	for i, word := range []string{"hello", "world!"} {
		before := time.Now().UnixNano()
		if _, err := server.Write([]byte(word)); err != nil {
			t.Fatal(err)
		}
		cqes := waitCQEs(t, r, 1, 2*time.Second)
		c := cqes[0]
		after := time.Now().UnixNano()
		if c.Res <= 0 || !c.HasBuffer() || !c.More() {
			t.Fatalf("chunk %d: completion %+v, want data in a buffer, still armed", i, c)
		}
		control, payload, ok := Recvmsg(br.Buf(c.BufferID())[:c.Res], msg)
		if !ok || string(payload) != word {
			t.Fatalf("chunk %d: payload %q (ok %v), want %q", i, payload, ok, word)
		}
		if rx := RxTime(control); rx < before-int64(time.Millisecond) || rx > after+int64(time.Millisecond) {
			t.Errorf("chunk %d: receive time %d not within [%d, %d]", i, rx, before, after)
		}
		br.Add(c.BufferID())
		br.Advance()
	}
	// The peer's end: a completion with no payload that ends the request.
	server.Close()
	c := waitCQEs(t, r, 1, 2*time.Second)[0]
	if c.More() || c.Res < 0 {
		t.Fatalf("the peer's end: completion %+v, want the request ended", c)
	}
	if c.HasBuffer() {
		if _, payload, ok := Recvmsg(br.Buf(c.BufferID())[:c.Res], msg); !ok || len(payload) != 0 {
			t.Errorf("the peer's end: payload %q (ok %v), want none", payload, ok)
		}
	}
	if RxTime(nil) != 0 || RxTime(make([]byte, 5)) != 0 {
		t.Error("RxTime of no control messages is not 0")
	}
	if _, _, ok := Recvmsg(make([]byte, 8), msg); ok {
		t.Error("Recvmsg accepted a buffer shorter than its header")
	}
}

// plainMsg is the msghdr the tests' other multishot receives are armed
// with: no name, no control messages, so each buffer holds the 16-byte
// io_uring_recvmsg_out header, then the payload.
var plainMsg unix.Msghdr

// prepRecv arms a multishot recvmsg on fd with plainMsg.
func prepRecv(sqe *SQE, fd int32, bgid uint16) { sqe.PrepRecvmsgMultishot(fd, &plainMsg, bgid) }

// received is the payload of a receive completion c (nil when it has none).
func received(br *BufRing, c CQE) []byte {
	if !c.HasBuffer() || c.Res <= 0 {
		return nil
	}
	_, p, _ := Recvmsg(br.Buf(c.BufferID())[:c.Res], &plainMsg)
	return p
}
