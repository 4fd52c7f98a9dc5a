package run

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
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/h3serve/certtest"
	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/serve/servetest"
	"github.com/hail-loadgen/hail/internal/transport"
)

// expiredCert is a self-signed certificate for 127.0.0.1 that expired
// yesterday, and its PEM file (to trust it with --cacert).
func expiredCert(t *testing.T) (tls.Certificate, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "expired"},
		NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-24 * time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "expired.pem")
	if err := os.WriteFile(f, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, f
}

// tlsServer serves 200s over TLS with cert (HTTP/2 offered too).
func tlsServer(t *testing.T, cert tls.Certificate) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.EnableHTTP2 = true
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.Config.ErrorLog = nil
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv.URL
}

// A failed handshake is named by its cause, with a hint for that cause
// (every failure hinted at --cacert before, even with --cacert given).
func TestTLSFailureCauses(t *testing.T) {
	t.Parallel()
	pki := certtest.New(t, "hail test CA")
	good := tlsServer(t, pki.Server)
	expired, expiredCA := expiredCert(t)
	old := tlsServer(t, expired)
	plain, _ := servetest.Start(t)
	for _, tc := range []struct {
		name, url, cacert, host string
		kind, hint              string
	}{
		{"expired", old, expiredCA, "", "tls certificate expired", "has expired"},
		{"wrong host", good, pki.CAFile, "wrong.test", "tls certificate name mismatch", "not issued for the name"},
		{"unknown authority", good, "", "", "tls unknown certificate authority", "--cacert"},
		{"other authority given", good, expiredCA, "", "tls unknown certificate authority", "a --cacert given is not it"},
		{"not TLS", strings.Replace(plain, "http://", "https://", 1), "", "", "not a tls server", "plain HTTP"},
	} {
		for _, version := range []plan.Proto{plan.HTTP1, plan.HTTP2} {
			t.Run(tc.name+"/h"+map[plan.Proto]string{plan.HTTP1: "1", plan.HTTP2: "2"}[version], func(t *testing.T) {
				p := newPlan(t, tc.url+"/", "net")
				p.Requests, p.Connections, p.CACert, p.Host, p.HTTPVersion = 6, 2, tc.cacert, tc.host, version
				if version == plan.HTTP2 {
					p.Engine = plan.EngineAuto
				}
				res := mustRun(t, p, Options{})
				if got := res.ErrorDistribution[tc.kind]; got != 6 {
					t.Errorf("%q = %d, want 6 (errors %v)", tc.kind, got, res.ErrorDistribution)
				}
				if len(res.Hail.Hints) != 1 || !strings.Contains(res.Hail.Hints[0], tc.hint) {
					t.Errorf("hints %q, want one with %q", res.Hail.Hints, tc.hint)
				}
				if tc.kind != "tls unknown certificate authority" && strings.Contains(strings.Join(res.Hail.Hints, " "), "--cacert") {
					t.Errorf("hint %q points at --cacert", res.Hail.Hints)
				}
			})
		}
	}
}

// A --unix-socket or --vsock-uds path that is not there ends the run
// before it starts, naming the path (every request was "other i/o error",
// exit 0, before).
func TestMissingSocketPath(t *testing.T) {
	t.Parallel()
	forEngines(t, func(t *testing.T, engine string) {
		dir := t.TempDir()
		for _, set := range []func(p *plan.Plan){
			func(p *plan.Plan) { p.UnixSocket = filepath.Join(dir, "none.sock") },
			func(p *plan.Plan) { p.VsockUDS, p.VsockUDSPort = filepath.Join(dir, "none.vsock"), 52 },
		} {
			p := newPlan(t, "http://localhost/", engine)
			p.Requests = 5
			set(p)
			_, err := Run(context.Background(), p, Options{})
			var se *transport.SocketPathError
			if !errors.As(err, &se) || !strings.Contains(err.Error(), filepath.Join(dir, "none.")) || strings.Contains(err.Error(), "host name") {
				t.Errorf("err %v", err)
			}
		}
	})
}

// rawServer answers every request on a kept-alive connection with resp and
// records each request's Host header.
func rawServer(t *testing.T, addr, resp string) (string, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var hosts []string
	bound := requestServer(t, addr, func(req *http.Request, c net.Conn) bool {
		mu.Lock()
		hosts = append(hosts, req.Host)
		mu.Unlock()
		_, err := io.WriteString(c, resp)
		return err == nil
	})
	return bound, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), hosts...)
	}
}

// A Content-Length with leading zeros is a valid length.
func TestContentLengthLeadingZeros(t *testing.T) {
	t.Parallel()
	forEngines(t, func(t *testing.T, engine string) {
		addr, _ := rawServer(t, "127.0.0.1:0", "HTTP/1.1 200 OK\r\nContent-Length: 0000000000000000000000000005\r\n\r\nhello")
		p := newPlan(t, "http://"+addr+"/", engine)
		p.Requests, p.Connections = 40, 2
		res := mustRun(t, p, Options{})
		if res.StatusCodeDistribution["200"] != 40 || res.Summary.TotalData != 200 {
			t.Errorf("statuses %v, errors %v, %d bytes", res.StatusCodeDistribution, res.ErrorDistribution, res.Summary.TotalData)
		}
	})
}

// An IPv6 zone in the URL ([::1%25lo]) chooses the interface and stays
// out of the Host header.
func TestIPv6ZoneNotInHost(t *testing.T) {
	t.Parallel()
	if ln, err := net.Listen("tcp6", "[::1]:0"); err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	} else {
		ln.Close()
	}
	forEngines(t, func(t *testing.T, engine string) {
		addr, hosts := rawServer(t, "[::1]:0", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		_, port, _ := net.SplitHostPort(addr)
		p := newPlan(t, "http://[::1%25lo]:"+port+"/", engine)
		p.Requests, p.Connections = 10, 2
		res := mustRun(t, p, Options{})
		if res.StatusCodeDistribution["200"] != 10 {
			t.Fatalf("statuses %v, errors %v", res.StatusCodeDistribution, res.ErrorDistribution)
		}
		for _, h := range hosts() {
			if want := fmt.Sprintf("[::1]:%s", port); h != want {
				t.Fatalf("Host %q, want %q", h, want)
			}
		}
	})
}
