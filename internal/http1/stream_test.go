package http1

import (
	"strings"
	"testing"
)

// sink records what the parser hands a StreamSink.
type sink struct {
	all   bool
	heads int
	body  strings.Builder
}

func (s *sink) All() bool           { return s.all }
func (s *sink) StreamHead()         { s.heads++ }
func (s *sink) StreamBody(b []byte) { s.body.Write(b) }

func TestStreamSink(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, resp string
		all        bool
		head       bool
		heads      int
		body       string
	}{
		{"chunked event stream", "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n" +
			"7\r\ndata: a\r\n2\r\n\n\n\r\n0\r\n\r\n", false, false, 1, "data: a\n\n"},
		{"content type any case, parameters", "HTTP/1.1 200 OK\r\ncontent-type: Text/Event-Stream; charset=utf-8\r\nContent-Length: 9\r\n\r\ndata: b\n\n", false, false, 1, "data: b\n\n"},
		{"close delimited", "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: c\n\n", false, false, 1, "data: c\n\n"},
		{"not a stream", "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nhi", false, false, 0, ""},
		{"look-alike type", "HTTP/1.1 200 OK\r\nContent-Type: text/event-streamx\r\nContent-Length: 2\r\n\r\nhi", false, false, 0, ""},
		{"error status is not a stream", "HTTP/1.1 503 Busy\r\nContent-Type: text/event-stream\r\nContent-Length: 2\r\n\r\nno", false, false, 0, ""},
		{"every 2xx with All", "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\ndata: d\n\n", true, false, 1, "data: d\n\n"},
		{"204 has no body", "HTTP/1.1 204 No Content\r\nContent-Type: text/event-stream\r\n\r\n", true, false, 0, ""},
		{"HEAD has no body", "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 9\r\n\r\n", false, true, 0, ""},
		{"1xx first", "HTTP/1.1 103 Early Hints\r\nContent-Type: text/event-stream\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", false, false, 0, ""},
	}
	for _, c := range cases {
		s := &sink{all: c.all}
		p := &Parser{Sink: s}
		p.Reset(c.head)
		// Byte by byte, keeping what Feed did not consume, as an engine does.
		var buf []byte
		done := false
		for i := 0; i < len(c.resp) && !done; i++ {
			buf = append(buf, c.resp[i])
			n, d, err := p.Feed(buf)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			buf, done = buf[n:], d
		}
		if !done {
			if d, err := p.EOF(); !d || err != nil {
				t.Fatalf("%s: EOF %v %v", c.name, d, err)
			}
		}
		if s.heads != c.heads || s.body.String() != c.body {
			t.Errorf("%s: %d heads, body %q; want %d, %q", c.name, s.heads, s.body.String(), c.heads, c.body)
		}
	}
}
