package report

import (
	"fmt"

	"hail/internal/stats"
)

// hintFor is the one-line advice printed once for an error kind that has a
// known fix on the generator's side.
var hintFor = map[stats.ErrorKind]string{
	stats.ErrTooManyOpenFiles: "the open-file limit is lower than -c needs: raise it (ulimit -n 65536) or lower -c",
	stats.ErrNoLocalPorts:     "the local ephemeral ports ran out (more connections than ports, or connections opened and closed too fast): keep connections alive, lower -c, or widen net.ipv4.ip_local_port_range",
	stats.ErrDNS:              "the host name did not resolve: check it, or use --connect-to / an IP address",
	stats.ErrTLS:              "the TLS handshake failed: for a self-signed server use --cacert FILE (or --insecure to skip verification)",
	stats.ErrConnectTimeout:   "connections were not accepted in time: the server's accept backlog may be full (-c larger than it accepts), or raise --connect-timeout",
}

// hints returns the advice for the error kinds that occurred, once each.
func hints(t *stats.Totals) []string {
	out := []string{}
	for k := range stats.NumErrorKinds {
		if n := t.Errors[k]; n > 0 {
			if h, ok := hintFor[stats.ErrorKind(k)]; ok {
				out = append(out, fmt.Sprintf("%s (%d × %s)", h, n, stats.ErrorKind(k)))
			}
		}
	}
	return out
}
