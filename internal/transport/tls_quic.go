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
	ips := d.ips
	if ips == nil {
		t0 := time.Now()
		ips, err = d.resolve(ctx)
		dns = time.Since(t0)
		if err != nil {
			return ap, dns, err
		}
	}
	_, port := d.host()
	return netip.AddrPortFrom(ips[int(d.next.Add(1))%len(ips)], uint16(port)), dns, nil
}
