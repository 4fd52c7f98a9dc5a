package transport_test

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/hail-loadgen/hail/internal/h3serve"
	"github.com/hail-loadgen/hail/internal/h3serve/certtest"
	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/run/runtest"
	"github.com/hail-loadgen/hail/internal/transport"
)

// An HTTPS/1.1 server that records the SNI of every handshake and, with
// requireFrom set, wants a client certificate signed by that CA.
func sniServer(t *testing.T, requireFrom *tls.Certificate) (port int, caFile string, snis func() []string) {
	t.Helper()
	k := certtest.New(t, "tls test CA", "example.test", "other.test")
	caFile = k.CAFile
	var mu sync.Mutex
	var seen []string
	conf := &tls.Config{Certificates: []tls.Certificate{k.Server}, GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
		mu.Lock()
		seen = append(seen, h.ServerName)
		mu.Unlock()
		return nil, nil
	}}
	if requireFrom != nil {
		pool := x509.NewCertPool()
		pool.AddCert(mustParse(t, requireFrom.Certificate[0]))
		conf.ClientCAs, conf.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", conf)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h3serve.Handler(), ErrorLog: log.New(io.Discard, "", 0)}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().(*net.TCPAddr).Port, caFile, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}

func mustParse(t *testing.T, der []byte) *x509.Certificate {
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func tlsPlan(t *testing.T, rawURL, caFile string) *plan.Plan {
	p := proxyPlan(t, rawURL, "http://127.0.0.1:1")
	p.Proxy, p.CACert = nil, caFile
	return p
}

// SNI is the URL's host, follows --host, and does not follow --connect-to
// (which only says where connections go).
func TestSNI(t *testing.T) {
	port, ca, snis := sniServer(t, nil)
	p := tlsPlan(t, "https://example.test:443/", ca)
	p.Requests, p.Connections = 4, 1
	p.ConnectTo = []plan.ConnectTo{{Host: "example.test", Port: 443, ToHost: "127.0.0.1", ToPort: port}}
	if res := runtest.Run(t, p); res.Hail.Counts.Responses != 4 {
		t.Fatalf("errors %v", res.ErrorDistribution)
	}
	p.Host = "other.test:443"
	if res := runtest.Run(t, p); res.Hail.Counts.Responses != 4 {
		t.Fatalf("--host: errors %v", res.ErrorDistribution)
	}
	if got := strings.Join(snis(), ","); got != "example.test,other.test" {
		t.Errorf("SNIs %q, want example.test then other.test", got)
	}
}

// HTTP/1.1 over TLS 1.3 with a server that wants a client certificate:
// the right one works, a missing one is named as such on every request,
// and reconnects resume their sessions.
func TestClientCertHTTP1(t *testing.T) {
	clientCA, _, _ := h3serve.Issue(nil, "client CA", nil, nil, true)
	port, ca, _ := sniServer(t, &clientCA)
	u := "https://127.0.0.1:" + strconv.Itoa(port) + "/"

	p := tlsPlan(t, u, ca)
	p.Requests, p.Connections = 30, 3
	res := runtest.Run(t, p)
	if got := res.ErrorDistribution["tls client certificate rejected"]; got != 30 {
		t.Errorf("no certificate: errors %v, want 30 rejections", res.ErrorDistribution)
	}

	c, certPEM, _ := h3serve.Issue(&clientCA, "hail", nil, nil, false)
	keyPEM, _ := h3serve.KeyPEM(c)
	dir := t.TempDir()
	both := filepath.Join(dir, "both.pem")
	os.WriteFile(both, append(certPEM, keyPEM...), 0o600)
	p = tlsPlan(t, u, ca)
	p.Cert, p.Requests, p.Connections, p.KeepAlive = both, 20, 1, false // one file with both, as curl takes it
	res = runtest.Run(t, p)
	if res.Hail.Counts.Responses != 20 || res.Hail.TLS == nil || res.Hail.TLS.Handshakes != 20 || res.Hail.TLS.Resumptions < 15 {
		t.Errorf("with --cert: responses %d, errors %v, tls %+v", res.Hail.Counts.Responses, res.ErrorDistribution, res.Hail.TLS)
	}
}

func TestTLSConfigErrors(t *testing.T) {
	dir := t.TempDir()
	_, caPEM, _ := h3serve.Issue(nil, "x", nil, nil, true)
	other, _, _ := h3serve.Issue(nil, "y", nil, nil, true)
	otherKey, _ := h3serve.KeyPEM(other)
	certFile, keyFile, junk := filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem"), filepath.Join(dir, "junk")
	os.WriteFile(certFile, caPEM, 0o600)
	os.WriteFile(keyFile, otherKey, 0o600)
	os.WriteFile(junk, []byte("nothing"), 0o600)
	for _, tc := range []struct {
		o    transport.TLSOptions
		want string
	}{
		{transport.TLSOptions{Cert: "/nonexistent.pem"}, "--cert /nonexistent.pem: no such file"},
		{transport.TLSOptions{Cert: certFile, Key: "/nonexistent.key"}, "--key /nonexistent.key"},
		{transport.TLSOptions{Cert: certFile, Key: keyFile}, "does not match"},
		{transport.TLSOptions{Cert: certFile}, "--key"},
		{transport.TLSOptions{Key: keyFile}, "needs --cert"},
		{transport.TLSOptions{CACert: junk}, "--cacert"},
		// Never read whole: /dev/zero would fill memory.
		{transport.TLSOptions{CACert: "/dev/zero"}, "--cacert /dev/zero: more than 16 MiB: not a PEM certificate or key file"},
		{transport.TLSOptions{Cert: "/dev/zero"}, "--cert /dev/zero: more than 16 MiB"},
		{transport.TLSOptions{Cert: certFile, Key: "/dev/zero"}, "--key /dev/zero: more than 16 MiB"},
	} {
		_, err := transport.NewTLSConfig(tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.o, err, tc.want)
		}
	}
}

// --cacert adds to the system's roots, as oha and curl do: a server whose CA
// is only in the system store (SSL_CERT_FILE) still verifies with --cacert
// naming another CA. The system pool is loaded once per process, so the
// check runs in a child process with the variable set from the start.
func TestCACertKeepsSystemRoots(t *testing.T) {
	if os.Getenv("HAIL_TEST_SYSTEM_ROOTS") == "" {
		sys := certtest.New(t, "system CA", "example.test")
		other := certtest.New(t, "other CA", "other.test")
		cmd := exec.Command(os.Args[0], "-test.run=^TestCACertKeepsSystemRoots$", "-test.v")
		cmd.Env = append(os.Environ(), "HAIL_TEST_SYSTEM_ROOTS=1", "SSL_CERT_FILE="+sys.CAFile, "SSL_CERT_DIR=/nonexistent",
			"HAIL_TEST_OTHER_CA="+other.CAFile)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "verified with the system root") {
			t.Fatalf("child: %v\n%s", err, out)
		}
		return
	}
	conf, err := transport.NewTLSConfig(transport.TLSOptions{ServerName: "example.test", CACert: os.Getenv("HAIL_TEST_OTHER_CA")})
	if err != nil {
		t.Fatal(err)
	}
	sysPEM, err := os.ReadFile(os.Getenv("SSL_CERT_FILE"))
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(sysPEM)
	ca, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ca.Verify(x509.VerifyOptions{Roots: conf.RootCAs}); err != nil {
		t.Fatalf("the system root is not trusted with --cacert: %v", err)
	}
	otherPEM, _ := os.ReadFile(os.Getenv("HAIL_TEST_OTHER_CA"))
	block, _ = pem.Decode(otherPEM)
	oca, _ := x509.ParseCertificate(block.Bytes)
	if _, err := oca.Verify(x509.VerifyOptions{Roots: conf.RootCAs}); err != nil {
		t.Fatalf("the --cacert root is not trusted: %v", err)
	}
	t.Log("verified with the system root and the --cacert root")
}
