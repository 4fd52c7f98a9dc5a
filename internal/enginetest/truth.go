// Package enginetest is hail's conformance suite for engines, on the model
// of golang.org/x/net/nettest: Run puts one engine through the same table
// of behaviours every engine must show — exact counts against the server's
// own count (in overload too), deadline aborts, timeouts, redirects,
// tracing, error kinds, interrupts — against Truth, a ground-truth server
// of its own that counts every request when it arrives.
package enginetest

import (
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/h3serve"
	"github.com/hail-loadgen/hail/internal/testnet"
)

// Proto is the protocol a Truth server speaks.
type Proto int

// The protocols.
const (
	HTTP1 Proto = iota // HTTP/1.1
	H2C                // HTTP/2 over cleartext TCP, prior knowledge
	H3                 // HTTP/3 over QUIC (TLS with a test certificate)
)

// Truth is a ground-truth target: it counts every request when it arrives,
// before it answers. Its paths:
//
//	/                   200 "ok"
//	/delay?d=D          200 after D (or when the client goes away)
//	/cap?d=D            200 after D, serving at most Cap requests at a time
//	/drop?every=N       200 "ok", but every N-th request here is never answered (Dropped counts them)
//	/redirect?n=N&d=D   302 to /redirect?n=N-1 (after D) until N is 0, then 200 "landed"
//	/away?to=URL        302 to URL (another origin)
//	/loop               302 to itself
//	/badloc             302 to an ftp:// Location
//	/close              no response: the connection (HTTP/1) or stream is cut
//	/partial?n=N        200 announcing 2N body bytes, N of them, then cut
//	/status?code=C      status C
//	/early              413 at once, without reading the request body
//	/to?code=C&loc=L    status C (a redirect) to L
//	/seen               200, after noting the request's method, body and headers (Seen)
//	/sse?…              a server-sent-events stream, well-formed or not (truth_sse.go)
//
// Requests with an Authorization or Cookie header are counted separately.
type Truth struct {
	// URL is the base URL ("http://127.0.0.1:PORT", https for HTTP/3).
	URL string
	// CAFile trusts its certificate (HTTP/3).
	CAFile string

	arrivals atomic.Int64
	first    atomic.Int64 // the first arrival, in Unix nanoseconds
	auth     atomic.Int64
	cookie   atomic.Int64
	inflight atomic.Int64
	peak     atomic.Int64
	drops    atomic.Int64 // arrivals at /drop
	dropped  atomic.Int64 // of them, left unanswered
	sem      chan struct{}
	stopAt   atomic.Int64 // the arrival at which it stops accepting connections (0: never)
	stopConn atomic.Int64 // ... once it has accepted this many connections
	conns    atomic.Int64 // connections accepted (HTTP/1, HTTP/2)
	stop     func()       // closes its listener, once
	mu       sync.Mutex
	seen     []Seen
	bodies   map[string]int // body → requests at /to that carried it
}

// Seen is a request that reached /seen.
type Seen struct {
	Method, Host, ContentType, Body string
}

// SeenRequests are the requests that reached /seen.
func (s *Truth) SeenRequests() []Seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Seen(nil), s.seen...)
}

// RedirectedBodies counts the bodies of the requests that reached /to.
func (s *Truth) RedirectedBodies() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := map[string]int{}
	for k, v := range s.bodies {
		m[k] = v
	}
	return m
}

// StopAccepting makes the server stop accepting connections once n
// requests have arrived over conns connections (HTTP/1, HTTP/2; 0 for
// HTTP/3): that request's handler closes its listener (new connections are
// refused, or time out for HTTP/3) and, from then on, every response
// closes its connection (HTTP/1 Connection: close, an HTTP/2 GOAWAY), so
// clients must reconnect — and cannot. Waiting for the client's every
// connection, and closing connections only after the listener, leaves
// none waiting unaccepted in its backlog when it closes (the kernel would
// reset it, with a request in it that was sent but never arrived).
func (s *Truth) StopAccepting(n, conns int64) { s.stopAt.Store(n); s.stopConn.Store(conns) }

// Cap is how many requests /cap serves at a time.
const Cap = 10

// Arrivals is how many requests arrived.
func (s *Truth) Arrivals() int64 { return s.arrivals.Load() }

// FirstArrival is when the first request arrived (the zero time if none has).
func (s *Truth) FirstArrival() time.Time {
	if n := s.first.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

// WithAuth and WithCookie count the requests that carried those headers.
func (s *Truth) WithAuth() int64   { return s.auth.Load() }
func (s *Truth) WithCookie() int64 { return s.cookie.Load() }

// Dropped is how many requests /drop left unanswered.
func (s *Truth) Dropped() int64 { return s.dropped.Load() }

// Peak is the most requests /cap ever served at once.
func (s *Truth) Peak() int64 { return s.peak.Load() }

// One certificate for every HTTP/3 Truth server, so that a client trusting
// one (a redirect to another origin) trusts all.
var (
	certOnce sync.Once
	cert     tls.Certificate
	certErr  error
)

// StartTruth serves p on a free loopback port until tb ends. idle, if
// given, closes keep-alive connections idle that long without a word (as
// many servers do): the next request on one finds it closed.
func StartTruth(tb testing.TB, p Proto, idle ...time.Duration) *Truth {
	tb.Helper()
	s := &Truth{sem: make(chan struct{}, Cap)}
	h := http.HandlerFunc(s.serve)
	if p == H3 {
		certOnce.Do(func() { cert, _, certErr = h3serve.SelfSigned() })
		if certErr != nil {
			tb.Fatal(certErr)
		}
		srv := h3serve.New(h3serve.Config{Addr: "127.0.0.1:0", Handler: h, Cert: cert})
		a, err := srv.Listen()
		if err != nil {
			tb.Fatal(err)
		}
		go srv.Serve()
		tb.Cleanup(func() { srv.Close() })
		s.stop = sync.OnceFunc(func() { srv.StopAccepting() })
		s.URL = "https://" + a.String()
		s.CAFile = filepath.Join(tb.TempDir(), "ca.pem")
		if err := os.WriteFile(s.CAFile, srv.CertPEM(), 0o600); err != nil {
			tb.Fatal(err)
		}
		return s
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	srv := &http.Server{Handler: h, ErrorLog: log.New(io.Discard, "", 0), Protocols: new(http.Protocols),
		ConnState: func(_ net.Conn, st http.ConnState) {
			if st == http.StateNew {
				s.conns.Add(1)
			}
		}}
	if len(idle) > 0 {
		srv.IdleTimeout = idle[0]
	}
	if p == H2C {
		srv.Protocols.SetUnencryptedHTTP2(true)
	} else {
		srv.Protocols.SetHTTP1(true)
	}
	go srv.Serve(ln)
	tb.Cleanup(func() { srv.Close() })
	s.stop = sync.OnceFunc(func() { ln.Close() })
	s.URL = "http://" + ln.Addr().String()
	return s
}

// serve counts the request, then answers it as its path says (see Truth).
func (s *Truth) serve(w http.ResponseWriter, r *http.Request) {
	if n, at := s.count(r), s.stopAt.Load(); at > 0 && n >= at && s.conns.Load() >= s.stopConn.Load() {
		s.stop()
		w.Header().Set("Connection", "close") // HTTP/1 closes, HTTP/2 sends GOAWAY
	}
	q := r.URL.Query()
	d, _ := time.ParseDuration(q.Get("d"))
	switch r.URL.Path {
	case "/delay":
		if !sleep(r, d) {
			return
		}
	case "/cap":
		if !s.capped(r, d) {
			return
		}
	case "/drop":
		if every, _ := strconv.ParseInt(q.Get("every"), 10, 64); every > 0 && s.drops.Add(1)%every == 0 {
			s.dropped.Add(1)
			<-r.Context().Done() // never answered: the client gives up
			return
		}
	case "/redirect":
		redirectChain(w, r, q, d)
		return
	case "/away":
		http.Redirect(w, r, q.Get("to"), http.StatusFound)
		return
	case "/loop":
		http.Redirect(w, r, "/loop", http.StatusFound)
		return
	case "/badloc":
		w.Header().Set("Location", "ftp://127.0.0.1/file")
		w.WriteHeader(http.StatusFound)
		return
	case "/close":
		cut(w)
		return
	case "/partial":
		partial(w, q)
		return
	case "/early":
		if r.ProtoMajor == 1 {
			w.Header().Set("Connection", "close")
		}
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		return
	case "/to":
		s.redirectTo(w, r, q)
		return
	case "/sse":
		sse(w, r, q)
		return
	case "/seen":
		s.note(r)
	case "/status":
		code, err := strconv.Atoi(q.Get("code"))
		if err != nil || code < 200 || code > 599 {
			code = http.StatusBadRequest
		}
		w.WriteHeader(code)
		return
	}
	io.WriteString(w, "ok")
}

// count counts a request's arrival, and whether it carried credentials,
// and returns how many have arrived.
func (s *Truth) count(r *http.Request) int64 {
	n := s.arrivals.Add(1)
	s.first.CompareAndSwap(0, time.Now().UnixNano())
	if r.Header.Get("Authorization") != "" {
		s.auth.Add(1)
	}
	if r.Header.Get("Cookie") != "" {
		s.cookie.Add(1)
	}
	return n
}

// sleep waits d, and reports false if the client went away first.
func sleep(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// capped serves /cap: it waits for one of Cap places, notes the peak of
// requests in place and sleeps d in it. It reports false if the client
// went away first.
func (s *Truth) capped(r *http.Request, d time.Duration) bool {
	select {
	case s.sem <- struct{}{}:
	case <-r.Context().Done():
		return false
	}
	n := s.inflight.Add(1)
	for p := s.peak.Load(); n > p && !s.peak.CompareAndSwap(p, n); p = s.peak.Load() {
	}
	ok := sleep(r, d)
	s.inflight.Add(-1)
	<-s.sem
	return ok
}

// redirectChain serves /redirect?n=N&d=D: after D, a 302 to n=N-1, or
// "landed" once N is 0.
func redirectChain(w http.ResponseWriter, r *http.Request, q url.Values, d time.Duration) {
	n, _ := strconv.Atoi(q.Get("n"))
	if !sleep(r, d) {
		return
	}
	if n > 0 {
		http.Redirect(w, r, fmt.Sprintf("/redirect?n=%d&d=%s", n-1, q.Get("d")), http.StatusFound)
		return
	}
	io.WriteString(w, "landed")
}

// cut gives no response: it closes an HTTP/1 connection, and resets an
// HTTP/2 or HTTP/3 stream.
// partial serves /partial?n=N: a 200 announcing 2N body bytes, N of
// them, then the connection (or stream) cut.
func partial(w http.ResponseWriter, q url.Values) {
	n, _ := strconv.Atoi(q.Get("n"))
	w.Header().Set("Content-Length", strconv.Itoa(2*n))
	w.WriteHeader(http.StatusOK)
	w.Write(make([]byte, n))
	http.NewResponseController(w).Flush()
	cut(w)
}

func cut(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if c, _, err := hj.Hijack(); err == nil {
			c.Close()
			return
		}
	}
	panic(http.ErrAbortHandler) // HTTP/2 and HTTP/3: the stream is reset
}

// redirectTo serves /to?code=C&loc=L: it counts the request's body
// (RedirectedBodies) and answers status C with Location L.
func (s *Truth) redirectTo(w http.ResponseWriter, r *http.Request, q url.Values) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	if s.bodies == nil {
		s.bodies = map[string]int{}
	}
	s.bodies[string(body)]++
	s.mu.Unlock()
	code, _ := strconv.Atoi(q.Get("code"))
	w.Header().Set("Location", q.Get("loc"))
	w.WriteHeader(code)
}

// note records a request that reached /seen (SeenRequests).
func (s *Truth) note(r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.seen = append(s.seen, Seen{Method: r.Method, Host: r.Host, ContentType: r.Header.Get("Content-Type"), Body: string(body)})
	s.mu.Unlock()
}

// DeadURL is a loopback URL whose connects are refused. For TCP the port
// stays bound, without listening, until tb ends: the kernel answers a SYN
// to it with a reset, and no other test can be given the port meanwhile
// (a port merely freed was taken by a parallel test's server once, and
// the run it was meant to refuse succeeded). For HTTP/3 it is a UDP port
// just freed: a bound one would swallow the handshake instead of refusing.
func DeadURL(tb testing.TB, p Proto) string {
	tb.Helper()
	if p == H3 {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		addr := pc.LocalAddr().String()
		pc.Close()
		return "https://" + addr
	}
	return "http://" + testnet.RefusedAddr(tb)
}
