package h2engine

import (
	"encoding/binary"
	"time"

	"github.com/hail-loadgen/hail/internal/stats"
)

// A gRPC call is an HTTP/2 POST whose template says content-type
// application/grpc: its body is the request's length-prefixed messages,
// sent as any body is, and its result is read beyond HTTP's: the reader
// follows the response's message framing (counting messages, stamping the
// first complete one as the first byte) and takes grpc-status from the
// trailers (or from a trailers-only response). Nothing of this runs for
// plain HTTP requests but one nil check per DATA frame.

// grpcResult is what the reader learns of a gRPC call's response.
type grpcResult struct {
	status int           // grpc-status of the trailers; -1 when none came
	msgs   int64         // complete response messages
	fb     time.Duration // when the first message was complete; 0 before
	have   int           // bytes of the current message's 5-byte prefix seen
	hdr    [5]byte
	left   uint32 // payload bytes of the current message still to come
}

func (g *grpcResult) reset() { *g = grpcResult{status: -1} }

// feed follows the message framing over one DATA frame's payload.
func (g *grpcResult) feed(data []byte, now func() time.Duration) {
	for {
		if g.have < 5 {
			if len(data) == 0 {
				return
			}
			n := copy(g.hdr[g.have:], data)
			g.have += n
			data = data[n:]
			if g.have < 5 {
				return
			}
			g.left = binary.BigEndian.Uint32(g.hdr[1:])
		}
		n := min(uint32(len(data)), g.left)
		g.left -= n
		data = data[n:]
		if g.left > 0 {
			return
		}
		g.msgs++
		if g.msgs == 1 {
			g.fb = now()
		}
		g.have = 0
	}
}

// code is the call's gRPC status code: the trailers' grpc-status; without
// one, what the HTTP status maps to (gRPC's HTTP-to-gRPC mapping), or
// Internal for a 200 response that ended without trailers. A response that
// ended inside a message is Internal too.
func (g *grpcResult) code(httpStatus int) int {
	switch {
	case g.have > 0 && (g.status == stats.GRPCOK || g.status < 0):
		return stats.GRPCInternal
	case g.status >= 0:
		return g.status
	}
	switch httpStatus {
	case 200:
		return stats.GRPCInternal
	case 400:
		return stats.GRPCInternal
	case 401:
		return 16 // Unauthenticated
	case 403:
		return 7 // PermissionDenied
	case 404:
		return stats.GRPCUnimplemented
	case 429, 502, 503, 504:
		return stats.GRPCUnavailable
	}
	return stats.GRPCUnknown
}

// parseGRPCStatus reads a grpc-status value; anything but a decimal number
// is Unknown.
func parseGRPCStatus(v string) int {
	if v == "" || len(v) > 4 {
		return stats.GRPCUnknown
	}
	n := 0
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return stats.GRPCUnknown
		}
		n = n*10 + int(v[i]-'0')
	}
	return n
}

// countFrames counts the length-prefixed messages of a gRPC request body.
func countFrames(body []byte) int64 {
	var n int64
	for len(body) >= 5 {
		size := binary.BigEndian.Uint32(body[1:5])
		if uint64(len(body)-5) < uint64(size) {
			break
		}
		body = body[5+size:]
		n++
	}
	return n
}
