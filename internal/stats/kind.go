package stats

// ErrorKind names one way a request can fail. Every request that does not end
// in an HTTP response is counted under exactly one kind; the set is fixed, so
// error counting needs no map and no allocation. The check kinds
// (ErrCheckStatus …) are responses that failed a scenario step's expect:
// checks, counted as errors instead of responses.
type ErrorKind uint8

// The error kinds, in report order. Their String values are the keys of the
// errorDistribution in reports.
const (
	ErrConnectRefused ErrorKind = iota
	ErrConnectTimeout
	ErrDNS
	ErrTLS
	ErrTLSExpired
	ErrTLSHostname
	ErrTLSUnknownCA
	ErrNotTLS
	ErrTimeout
	ErrReset
	ErrBrokenPipe
	ErrClosedBeforeResponse
	ErrClosedMidResponse
	ErrMalformedStatus
	ErrMalformedHeader
	ErrHeaderTooLarge
	ErrBadContentLength
	ErrBadChunk
	ErrUnexpectedUpgrade
	ErrTooManyRedirects
	ErrRedirect
	ErrTooManyOpenFiles
	ErrNoLocalPorts
	ErrOutOfMemory
	ErrUnreachable
	ErrVsockRefused
	ErrVsockGarbled
	ErrVsockUnavailable
	ErrProxyConnect
	ErrTLSClientCert
	ErrHTTP2StreamReset
	ErrHTTP2Conn
	ErrHTTP2GoAway
	ErrQUICHandshake
	ErrHTTP3
	ErrStreamError
	ErrStreamNoDone
	ErrStreamIdle
	ErrStreamNoEvents
	ErrStreamMidEvent
	ErrStreamAfterDone
	ErrStreamTooLarge
	ErrCheckStatus
	ErrCheckBody
	ErrCheckJSON
	ErrCheckHeader
	ErrAborted
	ErrOther
	numErrorKinds
)

var kindNames = [numErrorKinds]string{
	ErrConnectRefused:       "connection refused",
	ErrConnectTimeout:       "connect timeout",
	ErrDNS:                  "dns lookup failed",
	ErrTLS:                  "tls handshake failed",
	ErrTLSExpired:           "tls certificate expired",
	ErrTLSHostname:          "tls certificate name mismatch",
	ErrTLSUnknownCA:         "tls unknown certificate authority",
	ErrNotTLS:               "not a tls server",
	ErrTimeout:              "request timeout",
	ErrReset:                "connection reset by peer",
	ErrBrokenPipe:           "broken pipe",
	ErrClosedBeforeResponse: "connection closed before response",
	ErrClosedMidResponse:    "connection closed mid-response",
	ErrMalformedStatus:      "malformed status line",
	ErrMalformedHeader:      "malformed header",
	ErrHeaderTooLarge:       "header block too large",
	ErrBadContentLength:     "bad content-length",
	ErrBadChunk:             "bad chunked encoding",
	ErrUnexpectedUpgrade:    "unexpected protocol upgrade",
	ErrTooManyRedirects:     "too many redirects",
	ErrRedirect:             "bad redirect",
	ErrTooManyOpenFiles:     "too many open files",
	ErrNoLocalPorts:         "no free local ports",
	ErrOutOfMemory:          "out of memory",
	ErrUnreachable:          "network unreachable",
	ErrVsockRefused:         "vsock handshake refused",
	ErrVsockGarbled:         "vsock handshake garbled",
	ErrVsockUnavailable:     "vsock unavailable",
	ErrProxyConnect:         "proxy connect failed",
	ErrTLSClientCert:        "tls client certificate rejected",
	ErrHTTP2StreamReset:     "http2 stream reset",
	ErrHTTP2Conn:            "http2 connection error",
	ErrHTTP2GoAway:          "http2 goaway",
	ErrQUICHandshake:        "quic handshake failed",
	ErrHTTP3:                "http3 stream error",
	ErrStreamError:          "stream error event",
	ErrStreamNoDone:         "stream ended without [DONE]",
	ErrStreamIdle:           "stream idle timeout",
	ErrStreamNoEvents:       "stream had no events",
	ErrStreamMidEvent:       "stream ended mid-event",
	ErrStreamAfterDone:      "stream data after [DONE]",
	ErrStreamTooLarge:       "stream event too large",
	ErrCheckStatus:          "check failed: status",
	ErrCheckBody:            "check failed: body_contains",
	ErrCheckJSON:            "check failed: json",
	ErrCheckHeader:          "check failed: header",
	ErrAborted:              "aborted due to deadline",
	ErrOther:                "other i/o error",
}

// NumErrorKinds is the number of distinct error kinds.
const NumErrorKinds = int(numErrorKinds)

// String returns the kind's report name, e.g. "connection refused".
func (k ErrorKind) String() string {
	if k < numErrorKinds {
		return kindNames[k]
	}
	return "unknown"
}

// KindByName returns the kind whose String is name.
func KindByName(name string) (ErrorKind, bool) {
	for k, n := range kindNames {
		if n == name {
			return ErrorKind(k), true
		}
	}
	return 0, false
}
