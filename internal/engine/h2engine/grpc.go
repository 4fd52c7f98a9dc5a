package h2engine

import (
	"encoding/binary"
	"strings"
	"time"

	"github.com/hail-loadgen/hail/internal/status"
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
	status  int           // grpc-status of the trailers; -1 when none came
	msgs    int64         // complete response messages
	fb      time.Duration // when the first message was complete; 0 before
	framed  bool          // the response is gRPC's: a 200 with content-type application/grpc; its DATA are messages
	encoded bool          // the response head named a grpc-encoding: compressed messages are allowed
	bad     bool          // a message's flag byte broke the protocol (compressed without grpc-encoding, or not 0 or 1)
	have    int           // bytes of the current message's 5-byte prefix seen
	hdr     [5]byte
	left    uint32 // payload bytes of the current message still to come
}

func (g *grpcResult) reset() { *g = grpcResult{status: -1} }

// feed follows the message framing over one DATA frame's payload. The
// DATA of a response that is not gRPC's (an HTTP error page) is not framed.
func (g *grpcResult) feed(data []byte, now func() time.Duration) {
	if !g.framed {
		return
	}
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
			if f := g.hdr[0]; f > 1 || f == 1 && !g.encoded {
				g.bad = true
			}
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

// code is the call's gRPC status code. grpc-status, when the server sent
// one, is the status (gRPC's spec: it must be used), except that an OK
// over a broken message framing — a response that ended inside a message,
// or a compressed message without grpc-encoding — is Internal. Without
// grpc-status the code is what the HTTP status maps to (grpcFromHTTP).
func (g *grpcResult) code(httpStatus int) int {
	switch {
	case httpStatus == 200 && (g.have > 0 || g.bad) && (g.status == status.GRPCOK || g.status < 0):
		return status.GRPCInternal
	case g.status >= 0:
		return g.status
	}
	return grpcFromHTTP(httpStatus)
}

// grpcFromHTTP is the gRPC status of a response without grpc-status, from
// its HTTP status, as gRPC's "HTTP to gRPC Status Code Mapping"
// (doc/http-grpc-status-mapping.md) specifies: 400 Internal, 401
// Unauthenticated, 403 PermissionDenied, 404 Unimplemented, 429, 502, 503
// and 504 Unavailable, anything else Unknown — a 200 too, as a truly OK
// response carries grpc-status.
func grpcFromHTTP(httpStatus int) int {
	switch httpStatus {
	case 400:
		return status.GRPCInternal
	case 401:
		return status.GRPCUnauthenticated
	case 403:
		return status.GRPCPermissionDenied
	case 404:
		return status.GRPCUnimplemented
	case 429, 502, 503, 504:
		return status.GRPCUnavailable
	}
	return status.GRPCUnknown
}

// isGRPCContentType reports whether a response's content-type is gRPC's:
// application/grpc, alone or with a suffix (+proto, +json) or parameters.
func isGRPCContentType(v string) bool {
	const ct = "application/grpc"
	if len(v) < len(ct) || !strings.EqualFold(v[:len(ct)], ct) {
		return false
	}
	return len(v) == len(ct) || v[len(ct)] == '+' || v[len(ct)] == ';'
}

// parseGRPCStatus reads a grpc-status value; anything but a decimal number
// is Unknown.
func parseGRPCStatus(v string) int {
	if v == "" || len(v) > 4 {
		return status.GRPCUnknown
	}
	n := 0
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return status.GRPCUnknown
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
