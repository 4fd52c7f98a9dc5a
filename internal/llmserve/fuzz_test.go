package llmserve

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hail-loadgen/hail/internal/http1"
)

// FuzzParseHead feeds arbitrary bytes to the request head parser and, when
// a head parses, the chunked-body scanner over what follows; their results
// must be consistent and nothing may panic.
func FuzzParseHead(f *testing.F) {
	for _, s := range []string{
		"POST /v1/completions HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello",
		"POST /v1/chat/completions HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n0\r\nT: v\r\n\r\n",
		"GET http://h/v1/models?x HTTP/1.0\nConnection: keep-alive\n\n",
		"\r\nPOST / HTTP/1.1\r\nExpect: 100-continue\r\nConnection: a, close\r\n\r\n",
		"GET / HTTP/2.0\r\n\r\n",
		"POST /v1/completions HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffff\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var h http1.RequestHead
		n, err := http1.ParseRequestHead(data, maxHeadBytes, &h)
		if err != nil {
			if n != 0 || err.Status == 0 && err != errIncomplete {
				t.Fatalf("n %d with error %v", n, err)
			}
			return
		}
		if n <= 0 || n > len(data) || len(h.Path) == 0 || (h.Path[0] != '/' && string(h.Path) != "*") || len(h.Method) == 0 {
			t.Fatalf("n %d of %d, method %q, path %q", n, len(data), h.Method, h.Path)
		}
		if h.Chunked {
			rest := data[n:]
			end, err := chunkedEnd(rest, 1<<20)
			if err == nil {
				if end <= 0 || end > len(rest) {
					t.Fatalf("chunked end %d of %d", end, len(rest))
				}
				body := decodeChunked(nil, rest[:end])
				if len(body) > end {
					t.Fatalf("decoded %d bytes from %d", len(body), end)
				}
			}
		}
	})
}

// FuzzDecodeRequest feeds arbitrary bodies to the request decoder: it
// returns a request within the limits or an error, never panics.
func FuzzDecodeRequest(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","prompt":"a b","max_tokens":3,"stream":true,"stream_options":{"include_usage":true}}`,
		`{"prompt":[1,2,3],"min_tokens":2,"ignore_eos":true,"n":1}`,
		`{"messages":[{"role":"user","content":[{"type":"text","text":"x"}]}],"max_completion_tokens":4}`,
		`{"prompt":["a"],"max_tokens":null}`,
	} {
		f.Add([]byte(s), true)
		f.Add([]byte(s), false)
	}
	cfg := (&Config{}).withDefaults()
	f.Fuzz(func(t *testing.T, body []byte, chat bool) {
		api := apiCompletions
		if chat {
			api = apiChat
		}
		g, err := decodeRequest(api, body, &cfg)
		if err != nil {
			return
		}
		if g.maxTokens < 1 || g.maxTokens > maxOutputTokens || g.minTokens < 0 || g.minTokens > g.maxTokens || g.promptTokens < 0 || !bytes.HasPrefix(g.model, []byte(`"`)) {
			t.Fatalf("%+v", g)
		}
	})
}

// FuzzParseSpecs feeds arbitrary text to the distribution and fault
// parsers: what parses prints back to something that parses the same.
func FuzzParseSpecs(f *testing.F) {
	for _, s := range []string{"20ms", "uniform:1ms,2ms", "normal:20ms,5ms", "lognormal:20ms,10ms", "7", "429:5", "503:1:2s", "stall:1:1s", "drop:0.5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if d, err := ParseDist(s); err == nil {
			if d.Mean() < 0 || d.String() != s {
				t.Fatalf("%q: mean %v, text %q", s, d.Mean(), d)
			}
		}
		if fl, err := ParseFault(s); err == nil {
			again, err := ParseFault(fl.String())
			if err != nil || again != fl || strings.Contains(fl.String(), "none") {
				t.Fatalf("%q -> %v -> %v, %v", s, fl, again, err)
			}
		}
	})
}
