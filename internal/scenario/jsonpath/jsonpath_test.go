package jsonpath

import "testing"

func TestLookup(t *testing.T) {
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
		p, err := Parse(tc.path)
		if err != nil {
			t.Fatalf("%q: %v", tc.path, err)
		}
		var scratch []byte
		got, ok := p.Lookup(doc, &scratch)
		if ok != tc.ok || string(got) != tc.want {
			t.Errorf("%q: %q, %v; want %q, %v", tc.path, got, ok, tc.want, tc.ok)
		}
	}
	for _, bad := range []string{"", "$", "a..b", "."} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("path %q accepted", bad)
		}
	}
	// Broken documents are misses, never panics.
	for _, b := range []string{``, `{`, `{"id"`, `{"id":`, `{"id":"x`, `[`, `{"a":{"b":[1,2}`, `"id"`, `{"x": 1, "id"}`} {
		p, _ := Parse("id")
		var scratch []byte
		if v, ok := p.Lookup([]byte(b), &scratch); ok {
			t.Errorf("%q: found %q", b, v)
		}
	}
}
