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

func TestNumber(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		b    string
		i    int
		want int
	}{
		{"0", 0, 1}, {"-0", 0, 2}, {"12", 0, 2}, {"-12.5e+3", 0, 8}, {"1E9", 0, 3}, {"0.25", 0, 4},
		{"[7,8]", 1, 2}, {"[7,8]", 3, 4}, // the index after, what follows not judged
		{"01", 0, 1},   // a leading zero ends its number
		{"1.5.", 0, 3}, // so does a second point
		{"", 0, -1}, {"-", 0, -1}, {"+1", 0, -1}, {".5", 0, -1}, {"1.", 0, -1}, {"1.e3", 0, -1},
		{"1e", 0, -1}, {"1e+", 0, -1}, {"x", 0, -1}, {"1", 1, -1},
	} {
		if got := Number([]byte(c.b), c.i); got != c.want {
			t.Errorf("Number(%q, %d) = %d, want %d", c.b, c.i, got, c.want)
		}
	}
}

// FuzzNumber: the bytes Number takes are a JSON number (encoding/json's
// Valid), and an input that is one JSON number Number takes whole.
func FuzzNumber(f *testing.F) {
	for _, s := range []string{"0", "-12.5e+3", "01", "1.", "1e", ".5", "7,"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		n := Number(b, 0)
		if n > 0 && (!json.Valid(b[:n]) || !(b[0] == '-' || digit(b[0]))) {
			t.Fatalf("Number(%q) took %q, which is not a JSON number", b, b[:n])
		}
		// a JSON value that starts with - or a digit is a number
		if len(b) > 0 && (b[0] == '-' || digit(b[0])) && json.Valid(b) && !jsonWS(b) && n != len(b) {
			t.Fatalf("Number(%q) = %d; encoding/json reads it whole as a number", b, n)
		}
	})
}

// jsonWS reports whether b has JSON whitespace, which encoding/json skips
// around a value and Number does not.
func jsonWS(b []byte) bool {
	for _, c := range b {
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			return true
		}
	}
	return false
}
