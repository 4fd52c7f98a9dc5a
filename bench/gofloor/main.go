//go:build linux

// Command gofloor is bench/ssefloor.c written in Go, once on io_uring the
// way hail's uring engine reads (one locked thread, one ring with
// SINGLE_ISSUER and DEFER_TASKRUN, multishot receives into provided
// buffers, receive times from SO_TIMESTAMPNS, waits bounded at 50 ms) and
// once on Go's netpoller with hail's net engine's reader (a goroutine per
// connection). Like ssefloor it only counts events: no HTTP parsing, no
// JSON, no metrics. Written for bench/llm.sh: what a Go client pays per
// token before hail's own work, so that hail's cost divides into what the
// language and the kernel interface cost (gofloor ÷ floor) and what hail's
// parsing and measuring adds (hail ÷ gofloor). Not a product.
//
//	go build -o gofloor ./bench/gofloor
//	gofloor uring|net PORT STREAMS SECONDS TOKENS
//
// Prints one line, as ssefloor does: events N requests M seconds S
package main

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/hail-loadgen/hail/internal/transport"
	"github.com/hail-loadgen/hail/internal/uring"
)

// matcher matches a pattern byte by byte across reads, as ssefloor's does:
// no pattern below has a proper prefix that is also a suffix.
type matcher struct {
	p  string
	at int
}

func (m *matcher) step(c byte) bool {
	if c == m.p[m.at] {
		m.at++
		if m.at == len(m.p) {
			m.at = 0
			return true
		}
		return false
	}
	m.at = 0
	if c == m.p[0] {
		m.at = 1
	}
	return false
}

// stream is one connection's matching state, and the receive time of its
// last bytes (kept, as hail keeps each event's).
type stream struct {
	event, end matcher
	rx         int64
}

func newStream() stream {
	return stream{event: matcher{p: "data: {"}, end: matcher{p: "\r\n0\r\n\r\n"}}
}

// scan counts the events in b and reports how many responses ended in it.
func (s *stream) scan(b []byte) (events, ends int) {
	return s.event.count(b), s.end.count(b)
}

// count steps m over b and returns how many times the pattern completed:
// between matches it skips to the next byte that can start one
// (bytes.IndexByte), as a matcher at its start ignores every other byte.
func (m *matcher) count(b []byte) int {
	n := 0
	for i := 0; i < len(b); i++ {
		if m.at == 0 {
			j := bytes.IndexByte(b[i:], m.p[0])
			if j < 0 {
				break
			}
			i += j
		}
		if m.step(b[i]) {
			n++
		}
	}
	return n
}

func main() {
	if len(os.Args) != 6 || (os.Args[1] != "uring" && os.Args[1] != "net") {
		fmt.Fprintln(os.Stderr, "usage: gofloor uring|net PORT STREAMS SECONDS TOKENS")
		os.Exit(2)
	}
	port, err1 := strconv.Atoi(os.Args[2])
	n, err2 := strconv.Atoi(os.Args[3])
	secs, err3 := strconv.ParseFloat(os.Args[4], 64)
	tokens, err4 := strconv.Atoi(os.Args[5])
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil || n < 1 {
		fmt.Fprintln(os.Stderr, "gofloor: PORT, STREAMS, SECONDS and TOKENS must be numbers")
		os.Exit(2)
	}
	body := fmt.Sprintf(`{"model":"mock","prompt":"hello world","max_tokens":%d,"ignore_eos":true,"stream":true}`, tokens)
	req := []byte(fmt.Sprintf("POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"+
		"Content-Length: %d\r\n\r\n%s", port, len(body), body))
	d := time.Duration(secs * float64(time.Second))
	var events, requests int
	var err error
	start := time.Now()
	if os.Args[1] == "uring" {
		events, requests, err = runUring(port, n, d, req)
	} else {
		events, requests, err = runNet(port, n, d, req)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gofloor:", err)
		os.Exit(1)
	}
	fmt.Printf("events %d requests %d seconds %.2f\n", events, requests, time.Since(start).Seconds())
}

// runNet reads each connection in its own goroutine through Go's netpoller
// with the net engine's own reader (transport.RxReader: raw recvmsg inside
// syscall.RawConn.Read, with SO_TIMESTAMPNS receive times).
func runNet(port, n int, d time.Duration, req []byte) (int, int, error) {
	conns := make([]*net.TCPConn, n)
	for i := range conns {
		c, err := net.DialTCP("tcp", nil, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
		if err != nil {
			return 0, 0, err
		}
		conns[i] = c
	}
	var events, requests atomic.Int64
	var wg sync.WaitGroup
	var first atomic.Value
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var r transport.RxReader
			if !r.Attach(c) {
				first.CompareAndSwap(nil, fmt.Errorf("no receive times on %v", c.LocalAddr()))
				return
			}
			s := newStream()
			buf := make([]byte, 64<<10)
			var ev, rq int64
			defer func() { events.Add(ev); requests.Add(rq) }()
			if _, err := c.Write(req); err != nil {
				first.CompareAndSwap(nil, err)
				return
			}
			for {
				k, err := r.Read(buf)
				if err != nil {
					return // the run's end closed it, or the server did
				}
				s.rx = r.Rx
				e, ends := s.scan(buf[:k])
				ev += int64(e)
				for range ends {
					rq++
					if _, err := c.Write(req); err != nil {
						return
					}
				}
			}
		}()
	}
	time.Sleep(d)
	for _, c := range conns {
		c.Close()
	}
	wg.Wait()
	if err, ok := first.Load().(error); ok {
		return 0, 0, err
	}
	return int(events.Load()), int(requests.Load()), nil
}

const (
	bufSize  = 4096
	overhead = 16 + 32 // the recvmsg header and one SCM_TIMESTAMPNS
	opRecv   = 0
	opSend   = 1
)

// runUring reads every connection from one ring on one locked thread.
func runUring(port, n int, d time.Duration, req []byte) (int, int, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r, err := uring.New(256, &uring.Options{CQEntries: uint32(max(1024, 2*n))})
	if err != nil {
		return 0, 0, err
	}
	defer r.Close()
	// As many provided buffers as the uring engine gives a worker of n
	// connections: a few per batch, as buffers go back once read.
	count := uint32(64)
	for count < uint32(n/8) && count < 256 {
		count *= 2
	}
	br, err := r.NewBufRing(0, count, bufSize+overhead)
	if err != nil {
		return 0, 0, err
	}
	arena, err := uring.NewArena(4096 + len(req))
	if err != nil {
		return 0, 0, err
	}
	defer arena.Close()
	msg := (*unix.Msghdr)(unsafe.Pointer(&arena.Alloc(int(unsafe.Sizeof(unix.Msghdr{})))[0]))
	msg.Controllen = uint64(unix.CmsgSpace(16))
	sendBuf := arena.Alloc(len(req))
	copy(sendBuf, req)

	fds := make([]int32, n)
	streams := make([]stream, n)
	sa := &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}
	for i := range fds {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return 0, 0, err
		}
		defer unix.Close(fd)
		_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
		if err := unix.Connect(fd, sa); err != nil {
			return 0, 0, err
		}
		fds[i], streams[i] = int32(fd), newStream()
	}
	// next returns a free submission entry, submitting what is queued when
	// the queue is full.
	next := func() (*uring.SQE, error) {
		sqe := r.GetSQE()
		for sqe == nil {
			if _, err := r.Submit(); err != nil {
				return nil, err
			}
			sqe = r.GetSQE()
		}
		return sqe, nil
	}
	arm := func(i int) error {
		sqe, err := next()
		if err != nil {
			return err
		}
		sqe.PrepRecvmsgMultishot(fds[i], msg, br.Group())
		sqe.SetUserData(uint64(i)<<8 | opRecv)
		return nil
	}
	send := func(i int) error {
		sqe, err := next()
		if err != nil {
			return err
		}
		sqe.PrepSend(fds[i], unsafe.Pointer(&sendBuf[0]), uint32(len(sendBuf)), unix.MSG_NOSIGNAL)
		sqe.SetUserData(uint64(i)<<8 | opSend)
		return nil
	}
	for i := range fds {
		if err := arm(i); err != nil {
			return 0, 0, err
		}
		if err := send(i); err != nil {
			return 0, 0, err
		}
	}
	var cqes [256]uring.CQE
	events, requests := 0, 0
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		if _, err := r.SubmitAndWaitTimeout(1, 50*time.Millisecond); err != nil && err != uring.ErrTimeout {
			return 0, 0, err
		}
		for {
			k := r.PeekCQEs(cqes[:])
			if k == 0 {
				break
			}
			for _, c := range cqes[:k] {
				i, op := int(c.UserData>>8), c.UserData&0xff
				switch {
				case op == opSend && c.Res != int32(len(sendBuf)):
					return 0, 0, fmt.Errorf("connection %d: send: %d", i, c.Res)
				case op == opSend:
				case c.Res > 0:
					bid := c.BufferID()
					control, payload, ok := uring.Recvmsg(br.Buf(bid)[:c.Res], msg)
					if !ok || len(payload) == 0 {
						return 0, 0, fmt.Errorf("connection %d: closed by the server", i)
					}
					streams[i].rx = uring.RxTime(control)
					e, ends := streams[i].scan(payload)
					events += e
					for range ends {
						requests++
						if err := send(i); err != nil {
							return 0, 0, err
						}
					}
					br.Add(bid)
				case c.Res != -int32(unix.ENOBUFS):
					return 0, 0, fmt.Errorf("connection %d: receive: %d", i, c.Res)
				}
				if op == opRecv && !c.More() {
					if err := arm(i); err != nil {
						return 0, 0, err
					}
				}
			}
		}
		br.Advance()
	}
	return events, requests, nil
}
