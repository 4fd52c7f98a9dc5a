package sse

import (
	"fmt"
	"testing"
)

// FuzzScanner feeds any input, split at any point, and checks that the
// events and the mid-event state are those of the plain reference
// algorithm, and that a bounded event stays bounded.
func FuzzScanner(f *testing.F) {
	for _, s := range []string{
		"data: hello\n\n",
		"event: error\r\ndata: {}\r\n\r\n",
		"data: a\rdata: b\r\r",
		": ping\n\ndata: [DONE]\n\n",
		"\xef\xbb\xbfdata:x\n\n",
		"data: 0123456789abcdef\n\n",
		"id: 1\nretry: 5\nevent: x\n\n",
	} {
		f.Add([]byte(s), uint8(3), uint8(8))
	}
	f.Fuzz(func(t *testing.T, in []byte, split, maxData uint8) {
		max := int(maxData) + 1
		want, wantPending := reference(in, max)
		at := int(split) % (len(in) + 1)
		got, pending := scanPieces(t, max, in[:at], in[at:])
		if fmt.Sprint(got) != fmt.Sprint(want) || pending != wantPending {
			t.Fatalf("split at %d: events %v pending %v, reference %v pending %v", at, got, pending, want, wantPending)
		}
		for _, e := range got {
			if len(e.data) > max {
				t.Fatalf("event of %d bytes with MaxData %d", len(e.data), max)
			}
		}
	})
}
