package listen

import (
	"errors"
	"net"
	"sync"
)

// Config is what a Server binds and how it serves a connection.
type Config struct {
	// Name prefixes the Server's errors: the package it serves ("serve").
	Name string
	// Addr is what Listen binds: "host:port" or "unix:/path".
	Addr string
	// ErrClosed is what Listen returns once Close has begun.
	ErrClosed error
	// Bound, when not nil, is called with the listener as soon as it is
	// bound, before Listen returns and before any connection is accepted.
	Bound func(net.Listener)
	// Handle serves one connection, on a goroutine of its own, and closes
	// it (or hands it to something that does); Close closes a connection
	// whose Handle has not returned.
	Handle func(net.Conn)
}

// Server is a built-in server's start and stop: its listener, bound once;
// its open connections, each served by Config.Handle on a goroutine of its
// own; and Close, which closes the listener and every connection. All
// methods are safe for concurrent use.
type Server struct {
	cfg Config

	mu     sync.Mutex
	ln     net.Listener
	conns  map[net.Conn]struct{}
	closed bool
	done   chan struct{}
	wg     sync.WaitGroup
}

// NewServer returns a Server for cfg. It does not bind.
func NewServer(cfg Config) *Server {
	return &Server{cfg: cfg, conns: make(map[net.Conn]struct{}), done: make(chan struct{})}
}

// Done is closed when Close begins.
func (s *Server) Done() <-chan struct{} { return s.done }

// Addr is the bound address, nil before Listen.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// Listen binds the configured address and returns the bound address
// (useful with port 0). Calling it more than once is an error, and so is
// calling it after Close (Config.ErrClosed); Serve calls it when it has
// not been called.
func (s *Server) Listen() (net.Addr, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, s.cfg.ErrClosed
	}
	if s.ln != nil {
		return nil, errors.New(s.cfg.Name + ": already listening on " + s.ln.Addr().String())
	}
	ln, err := Listen(s.cfg.Addr)
	if err != nil {
		return nil, err
	}
	if s.cfg.Bound != nil {
		s.cfg.Bound(ln)
	}
	s.ln = ln
	return ln.Addr(), nil
}

// Serve accepts connections and serves each with Config.Handle until
// Close, then returns nil. It binds first if Listen has not been called.
// It returns an error if binding or accepting fails for a reason other
// than Close.
func (s *Server) Serve() error {
	s.mu.Lock()
	bound := s.ln != nil
	s.mu.Unlock()
	if !bound {
		if _, err := s.Listen(); err != nil {
			if err == s.cfg.ErrClosed {
				return nil
			}
			return err
		}
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	ln := s.ln
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()
	for {
		nc, err := Accept(ln, s.done)
		if nc == nil {
			return err
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			nc.Close()
			return nil
		}
		s.conns[nc] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serveConn(nc)
	}
}

func (s *Server) serveConn(nc net.Conn) {
	defer func() {
		s.mu.Lock()
		delete(s.conns, nc)
		s.mu.Unlock()
		s.wg.Done()
	}()
	s.cfg.Handle(nc)
}

// Close closes Done, every connection still being served and the
// listener, and returns the listener's close error; it does not wait
// (Wait does). Later calls return nil.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.done)
	ln := s.ln
	for nc := range s.conns {
		nc.Close()
	}
	s.mu.Unlock()
	if ln != nil {
		return ln.Close()
	}
	return nil
}

// Wait waits for a running Serve and every Handle it started to return.
func (s *Server) Wait() { s.wg.Wait() }
