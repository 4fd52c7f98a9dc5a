// Package h3serve is an HTTP/3 target built on quic-go, for hail's tests and
// benchmarks (and `hail serve --h3`). It answers as `hail serve` does for
// the common cases — GET / is 200 "hello world\n" — with a few of its
// query parameters (delay, status, size) and /echo. Handler is also the
// handler the HTTP/2 test servers use, so every protocol is measured against
// the same responses.
//
// Without a certificate it makes a self-signed one for 127.0.0.1, ::1 and
// localhost; CertPEM returns it for --cacert.
package h3serve

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

// Config configures a Server.
type Config struct {
	// Addr is the UDP address to listen on, e.g. 127.0.0.1:8443 (":0"
	// ports pick a free one).
	Addr string
	// Cert is the server certificate; the zero value makes a self-signed one.
	Cert tls.Certificate
	// ClientCAs, if set, requires client certificates signed by them.
	ClientCAs *x509.CertPool
	// MaxStreams bounds concurrent requests per connection (default 1000).
	MaxStreams int64
	// Handler answers the requests (default: Handler(), hail serve's own).
	Handler http.Handler
}

// Server is an HTTP/3 server.
type Server struct {
	cfg     Config
	certPEM []byte
	srv     *http3.Server
	conn    net.PacketConn
	tr      *quic.Transport
	ln      *quic.Listener
	reqs    atomic.Int64
	conns   atomic.Int64
	resumed atomic.Int64
	once    sync.Once
}

// New returns a server for cfg; Listen binds it.
func New(cfg Config) *Server {
	if cfg.MaxStreams == 0 {
		cfg.MaxStreams = 1000
	}
	return &Server{cfg: cfg}
}

// Listen binds the UDP socket (making the certificate if none was given).
func (s *Server) Listen() (net.Addr, error) {
	if s.cfg.Cert.Certificate == nil {
		cert, pemBytes, err := SelfSigned()
		if err != nil {
			return nil, err
		}
		s.cfg.Cert, s.certPEM = cert, pemBytes
	} else {
		s.certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.cfg.Cert.Certificate[0]})
	}
	quietBufferWarning()
	addr, err := net.ResolveUDPAddr("udp", s.cfg.Addr)
	if err != nil {
		return nil, err
	}
	pc, err := net.ListenUDP("udp", addr)
	if err != nil {
		return nil, err
	}
	tlsConf := &tls.Config{Certificates: []tls.Certificate{s.cfg.Cert}, NextProtos: []string{http3.NextProtoH3}}
	if s.cfg.ClientCAs != nil {
		tlsConf.ClientCAs = s.cfg.ClientCAs
		tlsConf.ClientAuth = tls.RequireAndVerifyClientCert
	}
	s.conn = pc
	s.tr = &quic.Transport{Conn: pc}
	h := s.cfg.Handler
	if h == nil {
		h = Handler()
	}
	s.srv = &http3.Server{Handler: s.count(h), TLSConfig: http3.ConfigureTLSConfig(tlsConf)}
	ln, err := s.tr.Listen(s.srv.TLSConfig, &quic.Config{MaxIncomingStreams: s.cfg.MaxStreams, Allow0RTT: false, MaxIdleTimeout: 30 * time.Second})
	if err != nil {
		pc.Close()
		return nil, err
	}
	s.ln = ln
	return pc.LocalAddr(), nil
}

// Serve answers requests until Close.
func (s *Server) Serve() error {
	if s.ln == nil {
		return errors.New("h3serve: Serve before Listen")
	}
	for {
		c, err := s.ln.Accept(context.Background())
		if err != nil {
			if errors.Is(err, quic.ErrServerClosed) || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		s.conns.Add(1)
		if c.ConnectionState().TLS.DidResume {
			s.resumed.Add(1)
		}
		go s.srv.ServeQUICConn(c)
	}
}

// StopAccepting closes the listener: handshakes of new connections are
// refused or go unanswered; established connections carry on.
func (s *Server) StopAccepting() error {
	if s.ln == nil {
		return nil
	}
	return s.ln.Close()
}

// Close stops the server and closes every connection.
func (s *Server) Close() error {
	var err error
	s.once.Do(func() {
		if s.srv != nil {
			err = s.srv.Close()
		}
		if s.ln != nil {
			s.ln.Close()
		}
		if s.tr != nil {
			s.tr.Close()
		}
		if s.conn != nil {
			s.conn.Close()
		}
	})
	return err
}

// CertPEM is the server certificate in PEM, for a client's --cacert.
func (s *Server) CertPEM() []byte { return s.certPEM }

// Requests is the number of requests answered so far.
func (s *Server) Requests() int64 { return s.reqs.Load() }

// Connections is the number of QUIC connections accepted so far, and how
// many of them resumed a TLS session.
func (s *Server) Connections() (total, resumed int64) { return s.conns.Load(), s.resumed.Load() }

func (s *Server) count(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.reqs.Add(1)
		h.ServeHTTP(w, r)
	})
}

var hello = []byte("hello world\n")

// Handler answers like hail serve's common cases: GET / is 200 "hello
// world\n"; ?delay=5ms waits, ?status=503 sets the status, ?size=1k sends
// that many bytes; /echo returns the request body.
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if d := q.Get("delay"); d != "" {
			if dur, err := time.ParseDuration(d); err == nil && dur > 0 && dur < time.Minute {
				time.Sleep(dur)
			}
		}
		status := http.StatusOK
		if st := q.Get("status"); st != "" {
			if n, err := strconv.Atoi(st); err == nil && n >= 200 && n <= 599 {
				status = n
			}
		}
		if r.URL.Path == "/echo" {
			body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			w.WriteHeader(status)
			w.Write(body)
			return
		}
		body := hello
		if sz := q.Get("size"); sz != "" {
			if n, ok := parseSize(sz); ok {
				body = make([]byte, n)
				for i := range body {
					body[i] = 'x'
				}
			}
		}
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(status)
		if r.Method != http.MethodHead {
			w.Write(body)
		}
	})
}

func parseSize(s string) (int, bool) {
	mult := 1
	switch {
	case strings.HasSuffix(s, "k"):
		mult, s = 1024, s[:len(s)-1]
	case strings.HasSuffix(s, "m"):
		mult, s = 1<<20, s[:len(s)-1]
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n*mult > 64<<20 {
		return 0, false
	}
	return n * mult, true
}

// SelfSigned makes a self-signed ECDSA certificate for 127.0.0.1, ::1 and
// localhost, valid for a day, and returns it with its PEM encoding.
func SelfSigned() (tls.Certificate, []byte, error) {
	return Issue(nil, "localhost", []string{"localhost"}, []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}, false)
}

// Issue makes a certificate for names and ips, signed by ca (self-signed,
// and a CA, when ca is nil); isCA makes a CA certificate. Every certificate
// is usable for both server and client authentication.
func Issue(ca *tls.Certificate, cn string, names []string, ips []net.IP, isCA bool) (tls.Certificate, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:    names, IPAddresses: ips, BasicConstraintsValid: true, IsCA: isCA || ca == nil,
	}
	parent, signer := tmpl, any(key)
	if ca != nil {
		parent, err = x509.ParseCertificate(ca.Certificate[0])
		if err != nil {
			return tls.Certificate{}, nil, err
		}
		signer = ca.PrivateKey
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, certPEM, nil
}

// KeyPEM encodes a certificate's ECDSA private key as PEM.
func KeyPEM(c tls.Certificate) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(c.PrivateKey.(*ecdsa.PrivateKey))
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}

// quietBufferWarning stops quic-go from logging that it could not raise
// the UDP socket buffers.
func quietBufferWarning() {
	if os.Getenv("QUIC_GO_DISABLE_RECEIVE_BUFFER_WARNING") == "" {
		_ = os.Setenv("QUIC_GO_DISABLE_RECEIVE_BUFFER_WARNING", "true")
	}
}
