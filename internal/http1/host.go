package http1

import "strings"

// zoneSpan is where an IPv6 zone ("%lo", "%25eth0") sits in host, a Host
// value such as "[fe80::1%lo]:8080": from the % to the closing bracket. ok
// is false when host has none.
func zoneSpan(host string) (from, to int, ok bool) {
	if len(host) == 0 || host[0] != '[' {
		return 0, 0, false
	}
	end := strings.IndexByte(host, ']')
	pct := strings.IndexByte(host, '%')
	if end < 0 || pct < 0 || pct > end {
		return 0, 0, false
	}
	return pct, end, true
}

// StripZone returns host without its IPv6 zone: "[fe80::1%lo]:8080"
// becomes "[fe80::1]:8080". The zone names an interface of this machine and
// means nothing to the server, so it never goes into a Host header or an
// :authority (RFC 9110 §7.2, as net/http does). Hosts without a zone are
// returned as they are, without allocating.
func StripZone(host string) string {
	if from, to, ok := zoneSpan(host); ok {
		return host[:from] + host[to:]
	}
	return host
}

// AppendHost appends host to dst without its IPv6 zone (see StripZone),
// allocating only if dst lacks capacity.
func AppendHost(dst []byte, host string) []byte {
	if from, to, ok := zoneSpan(host); ok {
		return append(append(dst, host[:from]...), host[to:]...)
	}
	return append(dst, host...)
}
