package transport

import (
	"context"
	"net/netip"
	"time"
)

// QUICAddr returns the UDP address the next HTTP/3 (QUIC) connection goes
// to, chosen as Dial chooses a TCP address: --connect-to applies, the
// pre-looked-up addresses are used in turn, and without a pre-lookup the
// name is resolved now (dns is how long that took). The QUIC engine opens
// its own sockets and performs the TLS handshake itself with Options().TLS,
// counting it with NoteTLS.
func (d *Dialer) QUICAddr(ctx context.Context) (ap netip.AddrPort, dns time.Duration, err error) {
	return d.nextAddr(ctx)
}
