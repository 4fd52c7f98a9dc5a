package jsonpath

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// refLookup is Lookup's reference, built on encoding/json: the raw text of the value at path
// in a valid document, the first of duplicate keys winning as in Lookup.
func refLookup(doc []byte, path Path) (json.RawMessage, bool) {
	raw := json.RawMessage(bytes.TrimSpace(doc))
	for _, seg := range path {
		dec := json.NewDecoder(bytes.NewReader(raw))
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		found := false
		switch tok {
		case json.Delim('{'):
			for dec.More() && !found {
				k, err := dec.Token()
				if err != nil {
					return nil, false
				}
				var v json.RawMessage
				if err := dec.Decode(&v); err != nil {
					return nil, false
				}
				if k.(string) == seg.key {
					raw, found = v, true
				}
			}
		case json.Delim('['):
			for n := 0; dec.More() && !found; n++ {
				var v json.RawMessage
				if err := dec.Decode(&v); err != nil {
					return nil, false
				}
				if n == seg.index {
					raw, found = v, true
				}
			}
		}
		if !found {
			return nil, false
		}
	}
	if string(raw) == "null" {
		return nil, false
	}
	return raw, true
}

// FuzzLookup feeds the scanner (which reads response bodies, so hostile input) any
// document and path. It must never panic or read out of bounds; on valid JSON it must find
// exactly what encoding/json finds: strings unescaped (invalid UTF-8 compared as U+FFFD),
// everything else as written.
func FuzzLookup(f *testing.F) {
	for _, s := range [][2]string{
		{`{"id":"a1","data":{"items":[{"id":"x"},{"id":"y\u00e9"}]}}`, "data.items.1.id"},
		{`{"a":1,"a":2}`, "a"},
		{`[1, [2, {"k": null}], "s"]`, "1.1.k"},
		{`{"s": "\ud83d\ude00\ud800x\\"}`, "s"},
		{`{"o": {"p": [true, false]}}`, "o"},
		{`{"0": "zero"}`, "0"},
		{`{"x": "unterminated`, "x"},
	} {
		f.Add([]byte(s[0]), s[1])
	}
	f.Fuzz(func(t *testing.T, doc []byte, p string) {
		path, err := Parse(p)
		if err != nil {
			return
		}
		var scratch []byte
		got, ok := path.Lookup(doc, &scratch)
		if !json.Valid(doc) {
			return
		}
		want, wok := refLookup(doc, path)
		if ok != wok {
			t.Fatalf("doc %q path %q: found %v (%q), encoding/json found %v (%q)", doc, p, ok, got, wok, want)
		}
		if !ok {
			return
		}
		if want[0] == '"' {
			var s string
			if err := json.Unmarshal(want, &s); err != nil {
				t.Fatal(err)
			}
			if g := string([]rune(string(got))); g != s {
				t.Fatalf("doc %q path %q: string %q, encoding/json %q", doc, p, g, s)
			}
			return
		}
		if string(got) != strings.TrimSpace(string(want)) {
			t.Fatalf("doc %q path %q: value %q, encoding/json %q", doc, p, got, want)
		}
	})
}
