// Package hostile provides misbehaving HTTP servers on loopback for tests:
// each Mode answers (or fails to answer) in one specific broken way, so
// tests can check that hail counts every failure under its named error kind
// and never crashes, hangs or miscounts.
package hostile

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"
)

// Mode is one way of misbehaving.
type Mode string

// The modes.
const (
	Reset            Mode = "reset"             // reads the request, sends half a response, then RST
	CloseNoResponse  Mode = "close-no-response" // reads the request, closes without a byte
	GarbageStatus    Mode = "garbage-status"    // answers "HELLO THERE\r\n\r\n"
	HugeHeader       Mode = "huge-header"       // a header block of 1 MiB
	ShortBody        Mode = "short-body"        // Content-Length 100, 10 bytes, close
	LongBody         Mode = "long-body"         // Content-Length 5, sends 10 bytes (the extra 5 are garbage for the next response)
	BadChunk         Mode = "bad-chunk"         // chunked with a non-hex chunk size
	Slowloris        Mode = "slowloris"         // a valid response at one byte per 100 ms
	HugeBody         Mode = "huge-body"         // Content-Length 1 GiB (or StartHugeBody's size), streamed
	Continue         Mode = "continue"          // 100 Continue, then 200
	NeverRead        Mode = "never-read"        // accepts and never reads or writes
	NoAccept         Mode = "no-accept"         // listens with a full backlog: never accepts
	HalfThenHang     Mode = "half-then-hang"    // sends the status line and hangs
	UpgradeSwitching Mode = "upgrade"           // 101 Switching Protocols
)

// Modes lists every mode.
var Modes = []Mode{Reset, CloseNoResponse, GarbageStatus, HugeHeader, ShortBody, LongBody, BadChunk,
	Slowloris, HugeBody, Continue, NeverRead, NoAccept, HalfThenHang, UpgradeSwitching}

// Server is a running hostile server.
type Server struct {
	// Addr is host:port to connect to.
	Addr  string
	mode  Mode
	ln    net.Listener
	mu    sync.Mutex
	conns map[net.Conn]bool
	wg    sync.WaitGroup
	done  chan struct{}
	fill  []net.Conn // NoAccept: connections that fill the backlog
	size  int64      // HugeBody: the body's length, a multiple of 1 MiB
}

// Start starts a server in mode m on 127.0.0.1 (HugeBody's bodies 1 GiB).
func Start(m Mode) (*Server, error) { return start(m, 1<<30) }

// StartHugeBody starts a HugeBody server whose bodies are size bytes,
// rounded up to a whole MiB.
func StartHugeBody(size int64) (*Server, error) { return start(HugeBody, (size+1<<20-1)&^(1<<20-1)) }

func start(m Mode, size int64) (*Server, error) {
	s := &Server{mode: m, conns: map[net.Conn]bool{}, done: make(chan struct{}), size: size}
	if m == NoAccept {
		return s, s.startNoAccept()
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s.ln, s.Addr = ln, ln.Addr().String()
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// URL is the server's base URL.
func (s *Server) URL() string { return "http://" + s.Addr + "/" }

// Close stops the server and every connection.
func (s *Server) Close() {
	close(s.done)
	if s.ln != nil {
		s.ln.Close()
	}
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	for _, c := range s.fill {
		c.Close()
	}
	s.wg.Wait()
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns[c] = true
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer func() {
				s.mu.Lock()
				delete(s.conns, c)
				s.mu.Unlock()
				c.Close()
			}()
			s.serve(c)
		}()
	}
}

// readRequest reads one request head (and ignores any body).
func readRequest(r *bufio.Reader) bool {
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return false
		}
		if strings.TrimRight(line, "\r\n") == "" {
			return true
		}
	}
}

func (s *Server) serve(c net.Conn) {
	r := bufio.NewReader(c)
	if s.mode == NeverRead {
		<-s.done
		return
	}
	for readRequest(r) {
		if !s.respond(c) {
			return
		}
	}
}

// respond misbehaves once; false ends the connection.
func (s *Server) respond(c net.Conn) bool {
	w := func(str string) bool { _, err := io.WriteString(c, str); return err == nil }
	switch s.mode {
	case Reset:
		w("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc")
		if tc, ok := c.(*net.TCPConn); ok {
			tc.SetLinger(0)
		}
		return false
	case CloseNoResponse:
		return false
	case GarbageStatus:
		w("HELLO THERE\r\n\r\n")
		return false
	case HugeHeader:
		w("HTTP/1.1 200 OK\r\nX-Big: " + strings.Repeat("a", 1<<20) + "\r\nContent-Length: 0\r\n\r\n")
		return false
	case ShortBody:
		w("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789")
		return false
	case LongBody:
		return w("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n0123456789")
	case BadChunk:
		w("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n")
		return false
	case Slowloris:
		for _, b := range []byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok") {
			select {
			case <-s.done:
				return false
			case <-time.After(100 * time.Millisecond):
			}
			if _, err := c.Write([]byte{b}); err != nil {
				return false
			}
		}
		return true
	case HugeBody:
		if !w(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", s.size)) {
			return false
		}
		chunk := make([]byte, 1<<20)
		for range s.size >> 20 {
			if _, err := c.Write(chunk); err != nil {
				return false
			}
		}
		return true
	case Continue:
		return w("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
	case HalfThenHang:
		w("HTTP/1.1 200 OK\r\n")
		<-s.done
		return false
	case UpgradeSwitching:
		w("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
		return false
	}
	panic(fmt.Sprintf("hostile: unknown mode %q", s.mode))
}

// startNoAccept listens with the smallest backlog and fills it, so further
// connection attempts get no answer (their SYNs are dropped).
func (s *Server) startNoAccept() error {
	ln, err := listenBacklog1()
	if err != nil {
		return err
	}
	s.ln, s.Addr = ln, ln.Addr().String()
	// Fill the accept queue: with backlog 1, a few connects complete and the rest hang.
	for range 8 {
		d := net.Dialer{Timeout: 200 * time.Millisecond}
		c, err := d.Dial("tcp", s.Addr)
		if err != nil {
			break
		}
		s.fill = append(s.fill, c)
	}
	return nil
}
