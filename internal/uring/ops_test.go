//go:build linux

package uring

import (
	"encoding/binary"
	"errors"
	"os"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// socketPair returns a connected AF_UNIX pair of type typ, closed at cleanup
// unless the test closed them already.
func socketPair(t *testing.T, typ int) [2]int {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, typ|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
	return fds
}

// isOpen reports whether fd is an open descriptor.
func isOpen(fd int) bool {
	_, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
	return err == nil
}

// newTestBufRing registers a buffer ring, skipping if the kernel has none.
func newTestBufRing(t *testing.T, r *Ring, bgid uint16, entries uint32, size int) *BufRing {
	t.Helper()
	br, err := r.NewBufRing(bgid, entries, size)
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return br
}

func TestArena(t *testing.T) {
	for _, size := range []int{0, -1} {
		if _, err := NewArena(size); !errors.Is(err, unix.EINVAL) {
			t.Errorf("NewArena(%d): %v, want EINVAL", size, err)
		}
	}
	a, err := NewArena(100)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.mem) != os.Getpagesize() {
		t.Fatalf("arena of 100 bytes maps %d, want one page", len(a.mem))
	}
	b1, b2 := a.Alloc(3), a.Alloc(5)
	if len(b1) != 3 || cap(b1) != 3 || len(b2) != 5 || cap(b2) != 5 {
		t.Fatalf("lengths/capacities %d/%d and %d/%d", len(b1), cap(b1), len(b2), cap(b2))
	}
	for _, b := range [][]byte{b1, b2} {
		if p := uintptr(unsafe.Pointer(&b[0])); p%arenaAlign != 0 {
			t.Fatalf("allocation at %#x is not %d-byte aligned", p, arenaAlign)
		}
		for _, c := range b {
			if c != 0 {
				t.Fatal("fresh arena memory is not zero")
			}
		}
	}
	copy(b1, "xyz")
	if b2[0] != 0 {
		t.Fatal("allocations overlap")
	}
	if a.Alloc(-1) != nil || a.Alloc(len(a.mem)) != nil {
		t.Fatal("a negative or oversized allocation succeeded")
	}
	if b := a.Alloc(64); len(b) != 64 {
		t.Fatal("a failed allocation used up the arena")
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil || a.Alloc(1) != nil {
		t.Fatalf("closed arena: Close %v, still allocates", err)
	}
}

// TestReadEventfd reads an eventfd through the ring into arena memory, as
// the uring engine's wake-up does: the read waits until the counter is
// written.
func TestReadEventfd(t *testing.T) {
	lockThread(t)
	r := newTestRing(t, 8, nil)
	a, err := NewArena(64)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() }) // after the ring's (cleanups run last first)
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(efd)
	buf := a.Alloc(8)
	sqe := r.GetSQE()
	sqe.PrepRead(int32(efd), unsafe.Pointer(&buf[0]), 8, ^uint64(0))
	sqe.SetUserData(3)
	if _, err := r.SubmitAndWaitTimeout(1, 20*time.Millisecond); !errors.Is(err, ErrTimeout) {
		t.Fatalf("read of an unwritten eventfd completed: %v", err)
	}
	var one [8]byte
	binary.NativeEndian.PutUint64(one[:], 5)
	if _, err := unix.Write(efd, one[:]); err != nil {
		t.Fatal(err)
	}
	c := waitCQEs(t, r, 1, 2*time.Second)[0]
	if c.UserData != 3 || c.Res != 8 || binary.NativeEndian.Uint64(buf) != 5 {
		t.Fatalf("cqe %+v, counter %d; want 8 bytes holding 5", c, binary.NativeEndian.Uint64(buf))
	}
}

// armedReceive returns a ring and a connected socket pair with a multishot
// receive (user_data ud) armed and submitted on fds[0].
func armedReceive(t *testing.T, ud uint64) (*Ring, [2]int) {
	t.Helper()
	lockThread(t)
	r := newTestRing(t, 8, nil)
	br := newTestBufRing(t, r, 0, 4, 64)
	fds := socketPair(t, unix.SOCK_STREAM)
	sqe := r.GetSQE()
	prepRecv(sqe, int32(fds[0]), br.Group())
	sqe.SetUserData(ud)
	if _, err := r.Submit(); err != nil {
		t.Fatal(err)
	}
	return r, fds
}

// TestCancelMultishot cancels an armed multishot receive by its user_data:
// the cancel succeeds and the receive ends without IORING_CQE_F_MORE; a
// cancel of nothing says -ENOENT.
func TestCancelMultishot(t *testing.T) {
	r, _ := armedReceive(t, 5)
	sqe := r.GetSQE()
	sqe.PrepCancel(5, 0)
	sqe.SetUserData(6)
	var recvEnded, cancelled bool
	for _, c := range waitCQEs(t, r, 2, 3*time.Second) {
		switch {
		case c.UserData == 5 && c.Res == -int32(unix.ECANCELED) && !c.More():
			recvEnded = true
		case c.UserData == 6 && c.Res == 0:
			cancelled = true
		default:
			t.Errorf("unexpected cqe %+v", c)
		}
	}
	if !recvEnded || !cancelled {
		t.Fatalf("receive ended %v, cancel succeeded %v", recvEnded, cancelled)
	}
	queueNoop(t, r, 7)
	if c := waitCQEs(t, r, 1, 3*time.Second)[0]; c.UserData != 7 || c.Res != -int32(unix.ENOENT) {
		t.Fatalf("cancel of nothing: %+v", c)
	}
}

// TestShutdownHardlinkClose closes sockets as the uring engine does: a
// shutdown hard-linked to the close. The shutdown wakes a pending receive
// (it ends with EOF), and the close runs even when the shutdown fails.
func TestShutdownHardlinkClose(t *testing.T) {
	// A connected socket with a receive pending.
	r, fds := armedReceive(t, 1)
	sqe := r.GetSQE()
	sqe.PrepShutdown(int32(fds[0]), unix.SHUT_RDWR)
	sqe.SetFlags(SQEIOHardlink)
	sqe.SetUserData(2)
	sqe = r.GetSQE()
	sqe.PrepClose(int32(fds[0]))
	sqe.SetUserData(3)
	got := map[uint64]CQE{}
	for _, c := range waitCQEs(t, r, 3, 3*time.Second) {
		got[c.UserData] = c
	}
	if c := got[1]; c.Res != recvmsgOutSize || c.More() {
		t.Errorf("pending receive: %+v; want EOF (a header and no payload) and no more", c)
	}
	if got[2].Res != 0 || got[3].Res != 0 {
		t.Errorf("shutdown %+v, close %+v; want 0 and 0", got[2], got[3])
	}
	if isOpen(fds[0]) {
		t.Error("the socket is still open")
	}
	var b [1]byte
	if n, err := unix.Read(fds[1], b[:]); n != 0 || err != nil {
		t.Errorf("peer read %d, %v; want EOF", n, err)
	}

	// An unconnected socket: the shutdown fails, the close still runs.
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	sqe = r.GetSQE()
	sqe.PrepShutdown(int32(fd), unix.SHUT_RDWR)
	sqe.SetFlags(SQEIOHardlink)
	sqe.SetUserData(4)
	sqe = r.GetSQE()
	sqe.PrepClose(int32(fd))
	sqe.SetUserData(5)
	got = map[uint64]CQE{}
	for _, c := range waitCQEs(t, r, 2, 3*time.Second) {
		got[c.UserData] = c
	}
	if got[4].Res != -int32(unix.ENOTCONN) || got[5].Res != 0 {
		t.Errorf("shutdown %+v, close %+v; want -ENOTCONN and 0", got[4], got[5])
	}
	if isOpen(fd) {
		unix.Close(fd)
		t.Error("the close did not run after the failed shutdown")
	}
}

// TestBufRingRecycle passes 12 messages through a group of 4 buffers with
// one multishot receive: it only stays armed if buffers given back with
// Add and Advance reach the kernel. Without them the group runs dry and the
// receive ends with -ENOBUFS.
func TestBufRingRecycle(t *testing.T) {
	lockThread(t)
	r := newTestRing(t, 8, nil)
	br := newTestBufRing(t, r, 3, 4, 64)
	if br.Group() != 3 {
		t.Fatalf("Group() = %d", br.Group())
	}
	fds := socketPair(t, unix.SOCK_STREAM)
	arm := func(ud uint64) {
		sqe := r.GetSQE()
		prepRecv(sqe, int32(fds[0]), br.Group())
		sqe.SetUserData(ud)
	}
	// send writes one message and returns its completion (each write is
	// received before the next, so a message never spans two buffers).
	send := func(i int) CQE {
		t.Helper()
		if _, err := unix.Write(fds[1], []byte{byte(i), 'x', 'y'}); err != nil {
			t.Fatal(err)
		}
		return waitCQEs(t, r, 1, 2*time.Second)[0]
	}
	arm(1)
	seen := map[uint16]bool{}
	for i := range 12 {
		c := send(i)
		if c.UserData != 1 || !c.HasBuffer() || !c.More() {
			t.Fatalf("message %d: %+v", i, c)
		}
		bid := c.BufferID()
		if got := received(br, c); len(got) != 3 || got[0] != byte(i) || string(got[1:3]) != "xy" {
			t.Fatalf("message %d: buffer %d holds %v", i, bid, got)
		}
		seen[bid] = true
		// Give it back; Add then Advance, in two steps as the engine does
		// for a whole batch.
		br.Add(bid)
		br.Advance()
	}
	if len(seen) != 4 {
		t.Errorf("used buffers %v, want all 4", seen)
	}

	// Now keep the buffers: the fifth message finds none.
	for i := range 4 {
		if c := send(i); c.Res != recvmsgOutSize+3 || !c.More() {
			t.Fatalf("kept message %d: %+v", i, c)
		}
	}
	if c := send(4); c.Res != -int32(unix.ENOBUFS) || c.More() {
		t.Fatalf("fifth message with every buffer kept: %+v; want -ENOBUFS, disarmed", c)
	}
}

// TestBufRingErrors: bad sizes and a group registered twice are refused.
func TestBufRingErrors(t *testing.T) {
	lockThread(t)
	r := newTestRing(t, 8, nil)
	newTestBufRing(t, r, 3, 4, 64)
	if _, err := r.NewBufRing(3, 4, 64); err == nil || !errors.Is(err, unix.EEXIST) {
		t.Errorf("duplicate buffer group: %v", err)
	}
	for _, tc := range []struct {
		entries uint32
		size    int
	}{{0, 64}, {3, 64}, {65536, 64}, {4, 0}, {4, -1}, {4, 1<<30 + 1}} {
		if _, err := r.NewBufRing(4, tc.entries, tc.size); !errors.Is(err, unix.EINVAL) {
			t.Errorf("NewBufRing(%d entries of %d bytes): %v, want EINVAL", tc.entries, tc.size, err)
		}
	}
	if len(r.bufRings) != 1 {
		t.Errorf("%d buffer rings kept after refusals, want 1", len(r.bufRings))
	}
}
