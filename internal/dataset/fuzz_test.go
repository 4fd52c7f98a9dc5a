package dataset

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// FuzzValue checks the scanner against encoding/json: a value is valid
// exactly when json.Valid says so (within the scanner's nesting bound).
func FuzzValue(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5e-3,"x\u00e9\n",true,false,null,{}]}`, `[]`, `"\ud800"`, `-0.1E+5`, `{"a" 1}`, `[1,]`, `01`, `"a`, ` {"b":{"c":[[]]}} `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		i := ws(b, 0)
		end := value(b, i)
		ok := end >= 0 && ws(b, end) == len(b)
		if want := json.Valid(b); ok != want {
			if want && nesting(b) >= maxDepth {
				return
			}
			t.Fatalf("%q: scanner %v (end %d), encoding/json %v", b, ok, end, want)
		}
	})
}

// nesting is the deepest bracket nesting of b, strings aside.
func nesting(b []byte) int {
	d, most, in := 0, 0, false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case in && c == '\\':
			i++
		case c == '"':
			in = !in
		case !in && (c == '[' || c == '{'):
			d++
			most = max(most, d)
		case !in && (c == ']' || c == '}'):
			d--
		}
	}
	return most
}

// FuzzUnescape checks a string's unescaped text against encoding/json's.
func FuzzUnescape(f *testing.F) {
	for _, s := range []string{`"a\"b\\c\/d\b\f\n\r\t"`, `"\u00e9\ud83d\ude00"`, `"\ud800x"`, `"\udc00\ud800"`, `"plain"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if str(b, 0) != len(b) {
			return
		}
		var want string
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatalf("%q: the scanner takes it, encoding/json does not: %v", b, err)
		}
		if got := unescape(nil, b[1:len(b)-1]); !bytes.Equal(got, []byte(want)) && bytes.IndexByte(b, 0x80) < 0 && validUTF8(b) {
			t.Fatalf("%q: %q, encoding/json %q", b, got, want)
		}
	})
}

func validUTF8(b []byte) bool { return strings.ToValidUTF8(string(b), "\uFFFD") == string(b) }

// FuzzJSONL checks a line's reading: no panic, and a prompt read is the
// one encoding/json reads.
func FuzzJSONL(f *testing.F) {
	for _, s := range []string{`{"prompt": "a b", "output_tokens": 3}`, `{"messages": [{"role": "user", "content": [{"text": "x"}]}]}`, `{"prompt": 1}`, `{}`, `[`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		d := &Dataset{o: Options{Counter: Words{}}}
		var r Record
		if d.jsonl(b, &r) != nil {
			return
		}
		if !json.Valid(b) {
			t.Fatalf("%q read although not valid JSON", b)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%q: %v", b, err)
		}
		if r.Prompt != nil && validUTF8(b) {
			var want string
			if json.Unmarshal(m["prompt"], &want) == nil && string(unescape(nil, r.Prompt)) != want && bytes.Count(b, []byte(`"prompt"`)) == 1 {
				t.Fatalf("%q: prompt %q, encoding/json %q", b, unescape(nil, r.Prompt), want)
			}
		}
		rd := &Reader{d: d}
		rd.count(&r)
	})
}

// FuzzShareGPT indexes any file as ShareGPT and reads every record.
func FuzzShareGPT(f *testing.F) {
	for _, s := range []string{`[{"conversations": [{"from": "human", "value": "a"}, {"from": "gpt", "value": "b c"}]}]`, `[{"conversation": []}, 1]`, `[`, `{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		d := &Dataset{Spec: Spec{Kind: ShareGPT, Path: "f"}, o: Options{Counter: Words{}}, f: &file{data: b}}
		if d.indexShareGPT() != nil {
			return
		}
		d.Records = len(d.f.off)
		rd := d.NewReader()
		var r Record
		for i := range d.Records {
			rd.Read(uint64(i), &r)
			if r.Prompt == nil || r.Output < 1 {
				t.Fatalf("%q: record %d: %+v", b, i, r)
			}
		}
	})
}

// FuzzTrace reads any file as an Azure trace; a date it reads is the one
// package time reads.
func FuzzTrace(f *testing.F) {
	for _, s := range []string{"TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n", "timestamp,contexttokens,generatedtokens\r\n1.5,1,1\n2,3,4", "a,b\n1,2"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		d := &Dataset{Spec: Spec{Kind: Azure, Path: "f"}, o: Options{Counter: Words{}, Speedup: 1}, f: &file{data: b}}
		if d.indexAzure() != nil || len(d.f.off) == 0 {
			return
		}
		d.Records = len(d.f.off)
		var last time.Duration
		for i := range d.Records {
			at, stop := d.Pace(uint64(i))
			if stop || at < last {
				t.Fatalf("%q: request %d at %v after %v", b, i, at, last)
			}
			last = at
		}
	})
}

// FuzzDate checks dates against package time.
func FuzzDate(f *testing.F) {
	f.Add("2023-11-16 18:15:46.6805900")
	f.Add("2000-02-29T00:00:00Z")
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := parseTime([]byte(s))
		if !ok || len(s) < 19 || s[4] != '-' {
			return
		}
		iso := strings.TrimSuffix(strings.Replace(s, " ", "T", 1), "Z")
		want, err := time.Parse("2006-01-02T15:04:05.999999999", iso)
		if err != nil {
			if strings.Contains(err.Error(), "out of range") || len(iso) > 29 || strings.HasSuffix(iso, "60") || strings.Contains(iso, ":60") {
				return // day 31 of a short month, second 60, more than 9 digits: read, package time refuses
			}
			t.Fatalf("%q read as %d, package time: %v", s, got, err)
		}
		if want.UnixNano() != got {
			t.Fatalf("%q: %d, package time %d", s, got, want.UnixNano())
		}
	})
}

// FuzzParseSpec reads any --dataset: a spec it accepts reads back the
// same from its String.
func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{"random", "shared-prefix:groups=2,prefix=9", "jsonl:a:b", "azure:", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sp, err := ParseSpec(s)
		if err != nil {
			return
		}
		if again, err := ParseSpec(sp.String()); err != nil || again != sp {
			t.Fatalf("%q: %+v reads back as %+v (%v)", s, sp, again, err)
		}
	})
}
