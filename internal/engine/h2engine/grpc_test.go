package h2engine

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/status"
)

func frame(payload int) []byte {
	b := make([]byte, 5+payload)
	binary.BigEndian.PutUint32(b[1:5], uint32(payload))
	return b
}

// The reader counts response messages whatever the DATA frames' split,
// and stamps the first byte when the first message is complete.
func TestGRPCFeedSplits(t *testing.T) {
	t.Parallel()
	var body []byte
	for _, n := range []int{0, 3, 70000, 1, 0} {
		body = append(body, frame(n)...)
	}
	for _, chunk := range []int{1, 2, 4, 5, 6, 7, 100, 16384, len(body)} {
		var g grpcResult
		g.reset()
		g.framed = true
		clock := time.Duration(0)
		now := func() time.Duration { clock++; return clock }
		for b := body; len(b) > 0; {
			n := min(chunk, len(b))
			g.feed(b[:n], now)
			b = b[n:]
		}
		if g.msgs != 5 || g.have != 0 || g.fb != 1 {
			t.Errorf("chunks of %d: %d messages, %d prefix bytes pending, first byte at %d", chunk, g.msgs, g.have, g.fb)
		}
	}
}

func TestGRPCCode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status, http, partial int
		want                  int
	}{
		{0, 200, 0, status.GRPCOK},
		{14, 200, 0, status.GRPCUnavailable},
		{-1, 200, 0, status.GRPCUnknown},  // ended without grpc-status: the spec's table says Unknown for a 200
		{-1, 200, 3, status.GRPCInternal}, // ended inside a message
		{0, 200, 3, status.GRPCInternal},
		{5, 200, 3, 5},
		// The spec's HTTP → gRPC table, for a response without grpc-status.
		{-1, 400, 0, status.GRPCInternal},
		{-1, 401, 0, status.GRPCUnauthenticated},
		{-1, 403, 0, status.GRPCPermissionDenied},
		{-1, 404, 0, status.GRPCUnimplemented},
		{-1, 429, 0, status.GRPCUnavailable},
		{-1, 502, 0, status.GRPCUnavailable},
		{-1, 503, 0, status.GRPCUnavailable},
		{-1, 504, 0, status.GRPCUnavailable},
		{-1, 418, 0, status.GRPCUnknown},
		{-1, 500, 0, status.GRPCUnknown},
		{-1, 301, 0, status.GRPCUnknown},
		// grpc-status, when given, is used whatever the HTTP status.
		{5, 503, 0, 5},
		{0, 404, 0, status.GRPCOK},
	} {
		g := grpcResult{status: tc.status, have: tc.partial}
		if got := g.code(tc.http); got != tc.want {
			t.Errorf("status %d, HTTP %d, partial %d: code %d, want %d", tc.status, tc.http, tc.partial, got, tc.want)
		}
	}
	for v, want := range map[string]int{"0": 0, "14": 14, "": status.GRPCUnknown, "x": status.GRPCUnknown, "99999": status.GRPCUnknown, "-1": status.GRPCUnknown} {
		if got := parseGRPCStatus(v); got != want {
			t.Errorf("parseGRPCStatus(%q) = %d, want %d", v, got, want)
		}
	}
	if n := countFrames(append(append(frame(2), frame(0)...), 0, 0)); n != 2 {
		t.Errorf("countFrames = %d, want 2", n)
	}
}

// FuzzGRPCFeed: any bytes in any split count as many messages as framing
// them whole does.
func FuzzGRPCFeed(f *testing.F) {
	f.Add(append(frame(3), frame(0)...), uint8(2))
	f.Add([]byte{0, 0xff, 0xff, 0xff, 0xff, 1}, uint8(1))
	f.Fuzz(func(t *testing.T, body []byte, chunk uint8) {
		c := int(chunk) + 1
		var whole, split grpcResult
		whole.reset()
		split.reset()
		whole.framed, split.framed = true, true
		now := func() time.Duration { return 1 }
		whole.feed(body, now)
		for b := body; len(b) > 0; {
			n := min(c, len(b))
			split.feed(b[:n], now)
			b = b[n:]
		}
		if whole.msgs != split.msgs || whole.have != split.have || whole.left != split.left || whole.bad != split.bad {
			t.Fatalf("whole %+v, split by %d %+v", whole, c, split)
		}
		if whole.msgs != countFrames(body) {
			t.Fatalf("feed counted %d, countFrames %d", whole.msgs, countFrames(body))
		}
		// A flag byte other than 0 (no grpc-encoding was named) is a protocol error.
		bad := false
		for b := body; len(b) >= 5; {
			bad = bad || b[0] != 0
			size := uint64(binary.BigEndian.Uint32(b[1:5]))
			if uint64(len(b)-5) < size {
				break
			}
			b = b[5+size:]
		}
		if whole.bad != bad {
			t.Fatalf("feed says bad %v, the prefixes say %v", whole.bad, bad)
		}
	})
}
