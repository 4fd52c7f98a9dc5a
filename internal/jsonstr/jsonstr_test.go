package jsonstr

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

func TestAppend(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		raw, want string
		ok        bool // Append's
		strictOK  bool // AppendStrict's
	}{
		{`plain`, "plain", true, true},
		{``, "", true, true},
		{`a\"b\\c\/d`, `a"b\c/d`, true, true},
		{`\b\f\n\r\t`, "\b\f\n\r\t", true, true},
		{`\u00e9\u00E9`, "éé", true, true},
		{`\ud83d\ude00!`, "😀!", true, true},
		{`\ud83d`, "\uFFFD", true, false},                    // a lone high surrogate
		{`\ude00x`, "\uFFFDx", true, false},                  // a lone low surrogate
		{`\ud83d\u0041`, "\uFFFDA", true, false},             // high, then no low
		{`\ud83d\ud83d\ude00`, "\uFFFD😀", true, false},       // high, then a pair
		{"caf\xc3\xa9 \xff", "caf\xc3\xa9 \xff", true, true}, // bytes as they are
		{`x\`, "x", false, false},
		{`\x`, "", false, false},
		{`\u12`, "", false, false},
		{`\u12g4`, "", false, false},
	} {
		got, ok := Append([]byte("<"), []byte(c.raw))
		if ok != c.ok || ok && string(got) != "<"+c.want {
			t.Errorf("Append(%q) = %q, %v; want %q, %v", c.raw, got, ok, "<"+c.want, c.ok)
		}
		got, ok = AppendStrict(nil, []byte(c.raw))
		if ok != c.strictOK || ok && string(got) != c.want {
			t.Errorf("AppendStrict(%q) = %q, %v; want %q, %v", c.raw, got, ok, c.want, c.strictOK)
		}
	}
}

func TestAppendAllocatesNothing(t *testing.T) {
	raw, buf := []byte(`caf\u00e9 \ud83d\ude00 \"quoted\" \n`), make([]byte, 0, 64)
	if n := testing.AllocsPerRun(100, func() { buf, _ = Append(buf[:0], raw) }); n != 0 {
		t.Errorf("Append allocates %v times into a buffer with room", n)
	}
}

// FuzzAppend: a string body encoding/json reads (valid UTF-8) reads the
// same through Append; AppendStrict agrees with Append or refuses.
func FuzzAppend(f *testing.F) {
	for _, s := range []string{`a\"b`, `\ud83d\ude00`, `\ud83d`, `\u00e9\n`, `x\`, `\u12`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, ok := Append(nil, raw)
		var want string
		quoted := append(append([]byte{'"'}, raw...), '"')
		if json.Unmarshal(quoted, &want) == nil && utf8.Valid(raw) {
			if !ok || string(got) != want {
				t.Fatalf("Append(%q) = %q, %v; encoding/json %q", raw, got, ok, want)
			}
		}
		if s, sok := AppendStrict(nil, raw); sok && (!ok || string(s) != string(got)) {
			t.Fatalf("AppendStrict(%q) = %q, Append %q, %v", raw, s, got, ok)
		}
	})
}
