package report

import (
	"fmt"
	"strings"

	"github.com/hail-loadgen/hail/internal/stats"
)

// hintFor is the one-line advice printed once for an error kind that has a
// known fix on the generator's side.
var hintFor = map[stats.ErrorKind]string{
	stats.ErrTooManyOpenFiles: "the open-file limit is lower than -c needs: raise it (ulimit -n 65536) or lower -c",
	stats.ErrNoLocalPorts:     "the local ephemeral ports ran out (more connections than ports, or connections opened and closed too fast): keep connections alive, lower -c, or widen net.ipv4.ip_local_port_range",
	stats.ErrOutOfMemory:      "hail could not get memory for request or socket buffers: lower -c or the request bodies' size, or give hail more memory (ulimit -v, the container's limit)",
	stats.ErrDNS:              "the host name did not resolve: check it, or use --connect-to / an IP address",
	stats.ErrTLS:              "the TLS handshake failed (the server ended it, or it shares no protocol version or cipher with hail): check that this port serves TLS to clients like hail",
	stats.ErrTLSExpired:       "the server's certificate has expired or is not valid yet: renew it, or check the clocks (--insecure skips verification)",
	stats.ErrTLSHostname:      "the server's certificate is not issued for the name hail checks (the URL's host, or --host): use a name it is issued for, with --connect-to to keep the address (--insecure skips verification)",
	stats.ErrTLSUnknownCA:     "the server's certificate is signed by an authority hail does not trust: give that CA with --cacert FILE (a --cacert given is not it), or --insecure to skip verification",
	stats.ErrNotTLS:           "the server did not answer the TLS handshake with TLS (plain HTTP on this port?): use http://, or the port that serves https",
	stats.ErrConnectTimeout:   "connections were not accepted in time: the server's accept backlog may be full (-c larger than it accepts), or raise --connect-timeout",
	stats.ErrTLSClientCert:    "the server rejected the client certificate: give one its CA trusts with --cert FILE --key FILE",
	stats.ErrProxyConnect:     "the proxy did not open the tunnel: check its address and credentials (-x http://user:pass@host:port) and that it allows CONNECT to this port",
	stats.ErrVsockRefused:     "the VMM refused the vsock port: check that the guest listens on the PORT given in --vsock-uds PATH:PORT",
	stats.ErrVsockGarbled:     "the VMM's unix socket did not answer CONNECT with OK <port>: check that PATH in --vsock-uds is the VMM's vsock socket (Firecracker's uds_path)",
	stats.ErrVsockUnavailable: "AF_VSOCK is not available here: load the vhost_vsock module on a host, or use --vsock-uds for Firecracker/Cloud Hypervisor",
	stats.ErrHTTP2Conn:        "HTTP/2 connections failed (a protocol error): on http:// the server must accept h2c with prior knowledge; use https:// (h2 by ALPN) or drop --http2 if it does not",
	stats.ErrHTTP2GoAway:      "the server sent GOAWAY and did not process these requests (each was sent again once on a new connection when that was safe): it is closing connections, perhaps after a number of requests or a maximum connection age",
}

// hints returns the advice for the error kinds that occurred, once each.
// mismatch, when not nil, is the certificate met that was not issued for
// the name hail checked: the name-mismatch hint names its names.
func hints(t *stats.Totals, mismatch *CertNames) []string {
	out := []string{}
	for k := range stats.NumErrorKinds {
		if n := t.Errors[k]; n > 0 {
			h, ok := hintFor[stats.ErrorKind(k)]
			if stats.ErrorKind(k) == stats.ErrTLSHostname && mismatch != nil && len(mismatch.Names) > 0 {
				h, ok = fmt.Sprintf("the server's certificate is not issued for the name hail checks, %s (the URL's host, or --host): it is issued for %s; use one of those, with --connect-to to keep the address (--insecure skips verification)",
					mismatch.Host, strings.Join(mismatch.Names, ", ")), true
			}
			if ok {
				out = append(out, fmt.Sprintf("%s (%d × %s)", h, n, stats.ErrorKind(k)))
			}
		}
	}
	return out
}

// CertNames are the names a server certificate was issued for, and the
// name hail checked it against.
type CertNames struct {
	Host  string
	Names []string
}
