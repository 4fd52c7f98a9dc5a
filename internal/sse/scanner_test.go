package sse

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// ev is an event as the tests compare them.
type ev struct {
	typ, data string
	over      bool
}

func (e ev) String() string { return fmt.Sprintf("{%q %q %v}", e.typ, e.data, e.over) }

// scanPieces feeds pieces to a fresh scanner (with maxData) and returns
// the events and whether the scanner was left mid-event.
func scanPieces(t testing.TB, maxData int, pieces ...[]byte) ([]ev, bool) {
	s := &Scanner{MaxData: maxData}
	s.Reset()
	var out []ev
	for _, p := range pieces {
		for len(p) > 0 {
			n, ok := s.Next(p)
			if n < 0 || n > len(p) || n == 0 && !ok {
				t.Fatalf("Next consumed %d of %d bytes (event %v)", n, len(p), ok)
			}
			p = p[n:]
			if ok {
				e := s.Event()
				typ := string(e.Type)
				if e.longType {
					typ = "<long>"
				}
				out = append(out, ev{typ, string(e.Data), e.Oversized})
			}
		}
	}
	return out, s.Pending()
}

// reference is the standard's algorithm written plainly: CRLF and lone CR
// become LF, then the stream is processed line by line.
func reference(in []byte, maxData int) ([]ev, bool) {
	if maxData <= 0 {
		maxData = DefaultMaxData
	}
	in = bytes.TrimPrefix(in, []byte("\xef\xbb\xbf"))
	in = bytes.ReplaceAll(in, []byte("\r\n"), []byte("\n"))
	in = bytes.ReplaceAll(in, []byte("\r"), []byte("\n"))
	var out []ev
	var data []byte
	typ, lines := "", 0
	for {
		i := bytes.IndexByte(in, '\n')
		if i < 0 {
			break
		}
		line := string(in[:i])
		in = in[i+1:]
		switch {
		case line == "":
			if lines > 0 {
				d, over := data, len(data) > maxData
				if over {
					d = d[:maxData]
				}
				if len(typ) > maxType {
					typ = "<long>"
				}
				out = append(out, ev{typ, string(d), over})
			}
			data, typ, lines = nil, "", 0
		case line[0] == ':':
		default:
			name, value, found := strings.Cut(line, ":")
			if found {
				value = strings.TrimPrefix(value, " ")
			}
			switch name {
			case "data":
				if lines > 0 {
					data = append(data, '\n')
				}
				data = append(data, value...)
				lines++
			case "event":
				typ = value
			}
		}
	}
	return out, len(in) > 0 || lines > 0 || typ != ""
}

func TestScanner(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		in      string
		max     int
		want    []ev
		pending bool
	}{
		{"one event", "data: hello\n\n", 0, []ev{{"", "hello", false}}, false},
		{"crlf", "data: a\r\ndata: b\r\n\r\n", 0, []ev{{"", "a\nb", false}}, false},
		{"lone cr", "data: a\rdata:b\r\r", 0, []ev{{"", "a\nb", false}}, false},
		{"typed", "event: error\ndata: {\"x\":1}\n\n", 0, []ev{{"error", `{"x":1}`, false}}, false},
		{"no space", "data:x\n\n", 0, []ev{{"", "x", false}}, false},
		{"two spaces keep one", "data:  x\n\n", 0, []ev{{"", " x", false}}, false},
		{"empty data line", "data\n\n", 0, []ev{{"", "", false}}, false},
		{"comment only", ": ping\n\n", 0, nil, false},
		{"type without data is not dispatched", "event: x\n\ndata: y\n\n", 0, []ev{{"", "y", false}}, false},
		{"id and retry ignored", "id: 7\nretry: 10\ndata: z\n\n", 0, []ev{{"", "z", false}}, false},
		{"unknown field", "foo: bar\ndata: z\n\n", 0, []ev{{"", "z", false}}, false},
		{"openai", "data: {\"choices\":[]}\n\ndata: [DONE]\n\n", 0, []ev{{"", `{"choices":[]}`, false}, {"", "[DONE]", false}}, false},
		{"mid-event at end", "data: a\n\ndata: b\n", 0, []ev{{"", "a", false}}, true},
		{"mid-line at end", "data: a\n\ndata: b", 0, []ev{{"", "a", false}}, true},
		{"oversized", "data: 0123456789\n\ndata: ok\n\n", 4, []ev{{"", "0123", true}, {"", "ok", false}}, false},
		{"oversized across lines", "data: ab\ndata: cd\n\n", 4, []ev{{"", "ab\nc", true}}, false},
		{"byte order mark", "\xef\xbb\xbfdata: a\n\n", 0, []ev{{"", "a", false}}, false},
		{"long type matches nothing", "event: " + strings.Repeat("e", 40) + "\ndata: a\n\n", 0, []ev{{"<long>", "a", false}}, false},
		{"long field name", "datadatadata: a\ndata: b\n\n", 0, []ev{{"", "b", false}}, false},
		{"last type wins", "event: a\nevent: error\ndata: x\n\n", 0, []ev{{"error", "x", false}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := []byte(c.in)
			check := func(how string, got []ev, pending bool) {
				t.Helper()
				if fmt.Sprint(got) != fmt.Sprint(c.want) || pending != c.pending {
					t.Errorf("%s: events %v pending %v, want %v pending %v", how, got, pending, c.want, c.pending)
				}
			}
			got, p := scanPieces(t, c.max, in)
			check("whole", got, p)
			var bytewise [][]byte
			for i := range in {
				bytewise = append(bytewise, in[i:i+1])
			}
			got, p = scanPieces(t, c.max, bytewise...)
			check("byte by byte", got, p)
			for i := 1; i < len(in); i++ {
				got, p = scanPieces(t, c.max, in[:i], in[i:])
				check(fmt.Sprintf("split at %d", i), got, p)
			}
		})
	}
}

// TestScannerNoAllocs proves the per-event path allocates nothing once the
// data buffer has grown.
func TestScannerNoAllocs(t *testing.T) {
	in := []byte("data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\nevent: error\ndata: x\r\n\r\n: ping\n")
	s := &Scanner{}
	allocs := testing.AllocsPerRun(1000, func() {
		b := in
		for len(b) > 0 {
			n, _ := s.Next(b)
			b = b[n:]
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per pass", allocs)
	}
}

func BenchmarkScanner(b *testing.B) {
	in := []byte(`data: {"id":"cmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"m","choices":[{"index":0,"delta":{"content":" token"},"logprobs":null,"finish_reason":null}]}` + "\n\n")
	s := &Scanner{}
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		n, ok := s.Next(in)
		if !ok || n != len(in) {
			b.Fatal("no event")
		}
	}
}
