package servetest

import (
	"crypto/tls"
	"io"
	"log"
	"net"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/hail-loadgen/hail/internal/h3serve"
)

// H2Server is an HTTP/2 server in the test process: h2c with prior knowledge on a plain
// listener, h2 by ALPN (and HTTP/1.1) with TLS. It counts requests, those that arrived over
// HTTP/2, and connections.
type H2Server struct {
	// URL is the base URL: "http://ADDR" for h2c, "https://ADDR" with TLS.
	URL string
	// Requests, H2 and Conns count the requests, those that came over HTTP/2, and the
	// connections accepted.
	Requests, H2, Conns atomic.Int64
}

// StartH2 serves h (nil: the built-in target's handler, h3serve.Handler) on ln (nil: a free
// loopback TCP port) until tb ends: h2c, or h2 by ALPN when tlsConf is given.
func StartH2(tb testing.TB, ln net.Listener, tlsConf *tls.Config, h http.Handler) *H2Server {
	tb.Helper()
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			tb.Fatal(err)
		}
	}
	if h == nil {
		h = h3serve.Handler()
	}
	s := &H2Server{}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.Requests.Add(1)
		if r.ProtoMajor == 2 {
			s.H2.Add(1)
		}
		h.ServeHTTP(w, r)
	}), ConnState: func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.Conns.Add(1)
		}
	}, ErrorLog: log.New(io.Discard, "", 0), Protocols: new(http.Protocols)}
	if tlsConf != nil {
		srv.Protocols.SetHTTP2(true)
		srv.Protocols.SetHTTP1(true)
		srv.TLSConfig = tlsConf
		s.URL = "https://" + ln.Addr().String()
		go srv.ServeTLS(ln, "", "")
	} else {
		srv.Protocols.SetUnencryptedHTTP2(true)
		s.URL = "http://" + ln.Addr().String()
		go srv.Serve(ln)
	}
	tb.Cleanup(func() { srv.Close() })
	return s
}
