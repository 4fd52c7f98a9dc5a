package llmchunk

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"
)

// FuzzPick checks Pick on any data: it never panics, and on valid JSON
// without escapes (Pick compares keys as written) it agrees with a full
// decode by encoding/json.
func FuzzPick(f *testing.F) {
	for _, s := range []string{
		`[DONE]`,
		`{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`,
		`{"choices":[{"text":" a"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}`,
		`{"choices":[],"usage":{"completion_tokens":128}}`,
		`{"error":{"message":"x"}}`,
		`{"object":"error","message":"y"}`,
		`{"a":[{"b":"]"}],"choices":[1,{"text":"z"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got := Pick(data)
		if got.Done && string(bytes.TrimSpace(data)) != "[DONE]" {
			t.Fatalf("Done for %q", data)
		}
		if bytes.IndexByte(data, '\\') >= 0 || !json.Valid(data) {
			return
		}
		if want := decoded(data); got != want {
			t.Fatalf("Pick(%s) = %+v, encoding/json reads %+v", data, got, want)
		}
	})
}

// decoded is Pick's answer read from a full decode.
func decoded(data []byte) Fields {
	f := Fields{Completion: -1, Prompt: -1}
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return f
	}
	top, ok := v.(map[string]any)
	if !ok {
		return f
	}
	f.Object = true
	if e, ok := top["error"]; ok && e != nil {
		f.Error = true
	}
	if o, ok := top["object"].(string); ok && o == "error" {
		f.Error = true
	}
	if cs, ok := top["choices"].([]any); ok && len(cs) > 0 {
		f.Choices = true
		if c, ok := cs[0].(map[string]any); ok {
			text := func(m map[string]any, k string) bool { s, ok := m[k].(string); return ok && s != "" }
			f.Content = text(c, "text")
			if d, ok := c["delta"].(map[string]any); ok {
				f.Content = f.Content || text(d, "content") || text(d, "reasoning_content") || text(d, "reasoning")
			}
		}
	}
	if u, ok := top["usage"].(map[string]any); ok {
		count := func(k string) int64 {
			n, ok := u[k].(json.Number)
			if !ok {
				return -1
			}
			i, err := strconv.ParseInt(string(n), 10, 64)
			if err != nil || i < 0 {
				return -1
			}
			return min(i, capped(string(n)))
		}
		f.Completion, f.Prompt = count("completion_tokens"), count("prompt_tokens")
	}
	return f
}

// capped is the value Pick keeps for a long run of digits: it stops
// growing past 2^50.
func capped(digits string) int64 {
	var n int64
	for _, c := range digits {
		if n < 1<<50 {
			n = n*10 + int64(c-'0')
		}
	}
	return n
}

// FuzzStr checks the string scanner against its definition, a byte at a
// time: a quote ends the string, a backslash escapes the byte after it.
func FuzzStr(f *testing.F) {
	for _, s := range []string{`"abc"`, `"a\"b"x`, `"a\\"b"`, `"abc\`, `"\`, `"`, `x"`, `"a\"`, ` "é\u0041" `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, i, ok := str(data, 0)
		bs, bi, bok := strBytewise(data, 0)
		if ok != bok || !bytes.Equal(s, bs) || i != bi {
			t.Fatalf("str(%q) = %q, %v at %d; byte by byte: %q, %v at %d", data, s, ok, i, bs, bok, bi)
		}
	})
}

// strBytewise is str a byte at a time.
func strBytewise(b []byte, i int) (s []byte, j int, ok bool) {
	if i, ok = at(b, i, '"'); !ok {
		return nil, i, false
	}
	start := i
	for i < len(b) {
		switch b[i] {
		case '"':
			return b[start:i], i + 1, true
		case '\\':
			i += 2
		default:
			i++
		}
	}
	return b[start:], len(b), true
}
