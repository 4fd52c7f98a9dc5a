// Package certtest issues throw-away certificates for tests of TLS, HTTP/2, HTTP/3 and proxies:
// a CA, a server certificate for 127.0.0.1 and chosen names, and client certificates, with the
// files that hail's --cacert, --cert and --key take.
package certtest

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/hail-loadgen/hail/internal/h3serve"
)

// PKI is a test CA and a server certificate it signed.
type PKI struct {
	// CA is the certificate authority, for signing client certificates too.
	CA tls.Certificate
	// Server is valid for 127.0.0.1 and the names given to New.
	Server tls.Certificate
	// CAFile is the CA certificate as a PEM file (for --cacert).
	CAFile string
	// Pool holds the CA certificate (for a server's ClientCAs or a client's RootCAs).
	Pool *x509.CertPool
}

// New issues a CA named cn and a server certificate for 127.0.0.1 and names ("localhost" when
// none are given), and writes the CA file into tb's temporary directory.
func New(tb testing.TB, cn string, names ...string) *PKI {
	tb.Helper()
	if len(names) == 0 {
		names = []string{"localhost"}
	}
	ca, caPEM, err := h3serve.Issue(nil, cn, nil, nil, true)
	if err != nil {
		tb.Fatal(err)
	}
	srv, _, err := h3serve.Issue(&ca, names[0], names, []net.IP{net.IPv4(127, 0, 0, 1)}, false)
	if err != nil {
		tb.Fatal(err)
	}
	f := filepath.Join(tb.TempDir(), "ca.pem")
	if err := os.WriteFile(f, caPEM, 0o600); err != nil {
		tb.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	return &PKI{CA: ca, Server: srv, CAFile: f, Pool: pool}
}

// ClientCert issues a client certificate signed by ca and writes it and its key as PEM files
// (for --cert and --key).
func ClientCert(tb testing.TB, ca *tls.Certificate) (certFile, keyFile string) {
	tb.Helper()
	c, certPEM, err := h3serve.Issue(ca, "hail client", nil, nil, false)
	if err != nil {
		tb.Fatal(err)
	}
	keyPEM, err := h3serve.KeyPEM(c)
	if err != nil {
		tb.Fatal(err)
	}
	dir := tb.TempDir()
	certFile, keyFile = filepath.Join(dir, "client.pem"), filepath.Join(dir, "client.key")
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		tb.Fatal(err)
	}
	return certFile, keyFile
}
