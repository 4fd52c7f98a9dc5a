package scenario

import (
	"regexp"
	"testing"

	"github.com/hail-loadgen/hail/internal/http1"
)

func TestJSONPaths(t *testing.T) {
	doc := []byte(` { "id" : "a1", "n": 42, "ok": true, "nil": null, "esc": "x\"y\u00e9\ud83d\ude00",
		"data": {"items": [ {"id": "first", "tags": ["t0", "t1"]}, {"id": "second", "deep": {"k": [1, {"z": "zz"}]}} ],
		"count": 2, "0": "zero-key", "obj": {"a": [1, 2]}},
		"k\u0065y": "escaped key", "s": "with } and ] inside" }`)
	for _, tc := range []struct {
		path string
		want string
		ok   bool
	}{
		{"id", "a1", true},
		{"$.id", "a1", true},
		{"n", "42", true},
		{"ok", "true", true},
		{"nil", "", false},
		{"missing", "", false},
		{"esc", "x\"yé😀", true},
		{"data.items.0.id", "first", true},
		{"data.items[1].id", "second", true},
		{"$.data.items[0].tags[1]", "t1", true},
		{"data.items.1.deep.k.1.z", "zz", true},
		{"data.items.2.id", "", false},
		{"data.count", "2", true},
		{"data.0", "zero-key", true},
		{"data.obj", `{"a": [1, 2]}`, true},
		{"key", "escaped key", true},
		{"s", "with } and ] inside", true},
		{"id.x", "", false},
		{"data.items.x", "", false},
	} {
		p, err := parseJSONPath(tc.path)
		if err != nil {
			t.Fatalf("%q: %v", tc.path, err)
		}
		var scratch []byte
		got, ok := jsonLookup(doc, p, &scratch)
		if ok != tc.ok || string(got) != tc.want {
			t.Errorf("%q: %q, %v; want %q, %v", tc.path, got, ok, tc.want, tc.ok)
		}
	}
	for _, bad := range []string{"", "$", "a..b", "."} {
		if _, err := parseJSONPath(bad); err == nil {
			t.Errorf("path %q accepted", bad)
		}
	}
	// Broken documents are misses, never panics.
	for _, b := range []string{``, `{`, `{"id"`, `{"id":`, `{"id":"x`, `[`, `{"a":{"b":[1,2}`, `"id"`, `{"x": 1, "id"}`} {
		p, _ := parseJSONPath("id")
		var scratch []byte
		if v, ok := jsonLookup([]byte(b), p, &scratch); ok {
			t.Errorf("%q: found %q", b, v)
		}
	}
}

func TestCaptureKinds(t *testing.T) {
	p := &http1.Parser{Status: 201, Body: []byte(`{"id":"abc123"} token=T-99;`), ContentLength: 27,
		WantHeaders: []string{"location"}, HeaderValues: [][]byte{[]byte("/items/abc123")}}
	var scratch []byte
	re := regexp.MustCompile(`token=([A-Z0-9-]+)`)
	for _, tc := range []struct {
		c    capture
		want string
	}{
		{capture{kind: capStatus}, "201"},
		{capture{kind: capHeader, header: "location"}, "/items/abc123"},
		{capture{kind: capHeader, header: "content-length"}, "27"},
		{capture{kind: capRegex, re: re, group: 1}, "T-99"},
		{capture{kind: capRegex, re: re}, "token=T-99"},
		{capture{kind: capJSON, path: []pathSeg{{key: "id", index: -1}}}, "abc123"},
	} {
		got, ok := tc.c.extract(p, &scratch)
		if !ok || string(got) != tc.want {
			t.Errorf("capture %d: %q, %v; want %q", tc.c.kind, got, ok, tc.want)
		}
	}
}
