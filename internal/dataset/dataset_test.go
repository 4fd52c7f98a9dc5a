package dataset

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// write writes content to a file in t's directory.
func write(t testing.TB, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func open(t testing.TB, spec string, o Options) *Dataset {
	t.Helper()
	s, err := ParseSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Open(s, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	return d
}

func TestParseSpec(t *testing.T) {
	t.Parallel()
	good := map[string]Spec{
		"":                                  {Kind: Random},
		"random":                            {Kind: Random},
		"shared-prefix:groups=4,prefix=100": {Kind: SharedPrefix, Groups: 4, PrefixTokens: 100},
		"shared-prefix:prefix=9, groups=2":  {Kind: SharedPrefix, Groups: 2, PrefixTokens: 9},
		"jsonl:/a/b:c.jsonl":                {Kind: JSONL, Path: "/a/b:c.jsonl"},
		"sharegpt:x.json":                   {Kind: ShareGPT, Path: "x.json"},
		"azure:t.csv":                       {Kind: Azure, Path: "t.csv"},
	}
	for in, want := range good {
		got, err := ParseSpec(in)
		if err != nil || got != want {
			t.Errorf("%q: %+v %v", in, got, err)
		}
		if again, err := ParseSpec(got.String()); err != nil || again != got {
			t.Errorf("%q: String %q reads back as %+v %v", in, got.String(), again, err)
		}
	}
	bad := map[string]string{
		"random:3":                        "takes no argument",
		"shared-prefix":                   "groups=G,prefix=P",
		"shared-prefix:groups=2":          "both",
		"shared-prefix:groups=0,prefix=1": "from 1",
		"shared-prefix:size=x":            "NAME=N",
		"shared-prefix:size=2,prefix=3":   "unknown",
		"jsonl":                           "needs its file",
		"parquet:x":                       "unknown dataset",
	}
	for in, want := range bad {
		if _, err := ParseSpec(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}

func TestJSONL(t *testing.T) {
	p := write(t, "d.jsonl", `{"prompt": "hello big world", "output_tokens": 7}

{"id": 3, "prompt": "tab\there \"quoted\" \u00e9"}`+"\r\n"+
		`{"messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": [{"type": "text", "text": "two words"}, {"type": "image_url", "image_url": {"url": "x"}}]}], "max_tokens": 3}`+"\n")
	d := open(t, "jsonl:"+p, Options{Order: Sequential})
	if d.Records != 3 || !d.Chat {
		t.Fatalf("%d records, chat %v", d.Records, d.Chat)
	}
	rd := d.NewReader()
	var r Record
	rd.Read(0, &r)
	if string(r.Prompt) != "hello big world" || r.Input != 3 || r.Output != 7 || r.Messages != nil {
		t.Errorf("record 0: %q %d %d", r.Prompt, r.Input, r.Output)
	}
	rd.Read(1, &r)
	if string(r.Prompt) != `tab\there \"quoted\" \u00e9` || r.Input != 4 || r.Output != 0 {
		t.Errorf("record 1: %q %d %d", r.Prompt, r.Input, r.Output)
	}
	rd.Read(5, &r) // 5 % 3: record 2
	var msgs []map[string]any
	if err := json.Unmarshal(r.Messages, &msgs); err != nil || len(msgs) != 2 || r.Input != 4 || r.Output != 3 || r.Prompt != nil {
		t.Errorf("record 2: %s %d %d %v", r.Messages, r.Input, r.Output, err)
	}
	if a := testing.AllocsPerRun(100, func() { rd.Read(2, &r) }); a != 0 {
		t.Errorf("%v allocations per read", a)
	}
	bad := map[string]string{
		`{"prompt": 3}`:            "line 1: \"prompt\" is not a string",
		"{\"prompt\": \"a\"}\n[1]": "line 2: not a JSON object",
		`{"prompt": "a", "messages": [{"role":"user","content":"b"}]}`: "both",
		`{"text": "a"}`:                         "no \"prompt\"",
		`{"prompt": ""}`:                        "empty",
		`{"prompt": "a", "output_tokens": 0}`:   "whole number",
		`{"prompt": "a", "output_tokens": 2.5}`: "whole number",
		`{"prompt": "a"} x`:                     "not one valid JSON object",
		`{"prompt": "a\x01"}`:                   "not one valid",
		`{"messages": []}`:                      "non-empty list",
		`{"messages": [{"role": "user"}]}`:      "message 1 needs",
		`{"messages": "hi"}`:                    "not a list",
		"\n\n":                                  "no usable record",
	}
	for content, want := range bad {
		p := write(t, "bad.jsonl", content)
		s, _ := ParseSpec("jsonl:" + p)
		if _, err := Open(s, Options{}); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%q: %v, want %q", content, err, want)
		}
	}
	if _, err := Open(Spec{Kind: JSONL, Path: filepath.Join(t.TempDir(), "none")}, Options{}); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing file: %v", err)
	}
}

func TestShareGPT(t *testing.T) {
	p := write(t, "s.json", `[
 {"id": "a", "conversations": [{"from": "human", "value": "what is two plus two"}, {"from": "gpt", "value": "it is four, of course"}]},
 {"id": "b", "conversations": [{"from": "human", "value": "only a question"}]},
 {"id": "c", "conversations": [{"from": "system", "value": "sys"}, {"from": "user", "value": "hi\nthere"}, {"from": "gpt", "value": "hello"}, {"from": "human", "value": "more"}]},
 {"id": "d", "conversations": []}
]`)
	d := open(t, "sharegpt:"+p, Options{Order: Sequential})
	if d.Records != 2 || d.Skipped != 2 {
		t.Fatalf("%d records, %d skipped", d.Records, d.Skipped)
	}
	rd := d.NewReader()
	var r Record
	rd.Read(0, &r)
	if string(r.Prompt) != "what is two plus two" || r.Input != 5 || r.Output != 5 {
		t.Errorf("conversation a: %q %d %d", r.Prompt, r.Input, r.Output)
	}
	rd.Read(1, &r)
	if string(r.Prompt) != `hi\nthere` || r.Input != 2 || r.Output != 1 {
		t.Errorf("conversation c: %q %d %d", r.Prompt, r.Input, r.Output)
	}
	if a := testing.AllocsPerRun(100, func() { rd.Read(0, &r) }); a != 0 {
		t.Errorf("%v allocations per read", a)
	}
	bad := map[string]string{
		`{"conversations": []}`: "not a JSON array",
		`[1]`:                   "conversation 1 (byte 1): not an object",
		`[{"id": 1}]`:           "no \"conversations\"",
		`[{"conversations": [{"from": "human"}]}]`: "turn 1: a turn needs",
		`[{"conversations": []}, ]`:                "bad JSON after conversation 1",
		`[{"conversations": []}] x`:                "bad JSON",
		`[{"conversations": []}]`:                  "no usable record",
	}
	for content, want := range bad {
		p := write(t, "bad.json", content)
		if _, err := Open(Spec{Kind: ShareGPT, Path: p}, Options{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", content, err, want)
		}
	}
}

func TestAzureTrace(t *testing.T) {
	p := write(t, "t.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n"+
		"2023-11-16 18:15:46.6805900,374,44\n"+
		"2023-11-16 18:15:47.1805900,100,0\n"+
		"2023-11-16 18:15:50.6805900,2000,300\n")
	d := open(t, "azure:"+p, Options{Speedup: 2})
	if d.Records != 3 {
		t.Fatalf("%d records", d.Records)
	}
	wantAt := []time.Duration{0, 250 * time.Millisecond, 2 * time.Second}
	wantIn, wantOut := []int{374, 100, 2000}, []int{44, 1, 300}
	rd := d.NewReader()
	for i := range 3 {
		at, stop := d.Pace(uint64(i))
		var r Record
		rd.Read(uint64(i), &r)
		if stop || at != wantAt[i] || r.At != at || r.Input != wantIn[i] || r.Output != wantOut[i] {
			t.Errorf("line %d: at %v stop %v, record %+v", i+2, at, stop, r)
		}
	}
	if _, stop := d.Pace(3); !stop {
		t.Error("the schedule does not end with the trace")
	}
	if a := testing.AllocsPerRun(100, func() { d.Pace(1) }); a != 0 {
		t.Errorf("%v allocations per Pace", a)
	}
	// Columns by name, seconds as numbers.
	p = write(t, "t2.csv", "x,generatedtokens,timestamp,contexttokens\n,5,0.5,7\n,6,1.25,8\n")
	d = open(t, "azure:"+p, Options{})
	if at, _ := d.Pace(1); at != 750*time.Millisecond {
		t.Errorf("seconds: %v", at)
	}
	bad := map[string]string{
		"TIMESTAMP,ContextTokens\n1,2\n":                                     "no GeneratedTokens column",
		"TIMESTAMP,ContextTokens,GeneratedTokens\n2023-13-01 00:00:00,1,1\n": "line 2: TIMESTAMP",
		"TIMESTAMP,ContextTokens,GeneratedTokens\n1,x,1\n":                   "line 2: \"x\" is not a token count",
		"TIMESTAMP,ContextTokens,GeneratedTokens\n1,1\n":                     "fewer columns",
		"TIMESTAMP,ContextTokens,GeneratedTokens\n2,1,1\n1,1,1\n":            "line 3: its TIMESTAMP is before line 2's",
		"TIMESTAMP,ContextTokens,GeneratedTokens\n":                          "no usable record",
	}
	for content, want := range bad {
		p := write(t, "bad.csv", content)
		if _, err := Open(Spec{Kind: Azure, Path: p}, Options{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", content, err, want)
		}
	}
}

func TestParseDate(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"2023-11-16 18:15:46.6805900", "1970-01-01 00:00:00", "2000-02-29T23:59:59.999999999Z", "1999-12-31 12:00:00.5"} {
		got, ok := parseTime([]byte(s))
		want, err := time.Parse("2006-01-02T15:04:05.999999999Z", strings.Replace(strings.TrimSuffix(s, "Z"), " ", "T", 1)+"Z")
		if !ok || err != nil || got != want.UnixNano() {
			t.Errorf("%s: %d %v, want %d (%v)", s, got, ok, want.UnixNano(), err)
		}
	}
}

// Every pass over the records takes each once, in an order of its own,
// the same for the same seed.
func TestOrder(t *testing.T) {
	t.Parallel()
	for _, n := range []uint64{1, 2, 3, 10, 1000, 4097} {
		pass := func(seed, p uint64) []uint64 {
			out := make([]uint64, n)
			seen := make([]bool, n)
			for i := range n {
				out[i] = pick(Shuffle, p*n+i, n, seed)
				if out[i] >= n || seen[out[i]] {
					t.Fatalf("n %d seed %d pass %d: record %d twice or out of range", n, seed, p, out[i])
				}
				seen[out[i]] = true
			}
			return out
		}
		a, b, c := pass(1, 0), pass(1, 1), pass(2, 0)
		if n >= 10 && (fmt.Sprint(a) == fmt.Sprint(b) || fmt.Sprint(a) == fmt.Sprint(c)) {
			t.Errorf("n %d: passes or seeds share an order", n)
		}
		if fmt.Sprint(a) != fmt.Sprint(pass(1, 0)) {
			t.Errorf("n %d: not reproducible", n)
		}
		if n >= 10 && pick(Sequential, 5, n, 1) != 5 {
			t.Errorf("sequential")
		}
	}
	seen := map[uint64]int{}
	for i := range uint64(3000) {
		seen[pick(Replace, i, 3, 9)]++
	}
	if len(seen) != 3 || seen[0] < 800 {
		t.Errorf("random: %v", seen)
	}
	for s, want := range map[string]Order{"": Shuffle, "shuffle": Shuffle, "sequential": Sequential, "random": Replace} {
		if o, err := ParseOrder(s); err != nil || o != want || (s != "" && o.String() != s) {
			t.Errorf("%q: %v %v", s, o, err)
		}
	}
	if _, err := ParseOrder("x"); err == nil {
		t.Error("order x accepted")
	}
}

func TestWords(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]int{"": 0, " ": 0, "a": 1, " a b\t\nc ": 3, "x\vy\fz\rw": 4} {
		if got := (Words{}).Count([]byte(s)); got != want {
			t.Errorf("%q: %d", s, got)
		}
	}
}

func TestSharedPrefixGroups(t *testing.T) {
	t.Parallel()
	d := open(t, "shared-prefix:groups=5,prefix=10", Options{Seed: 3})
	seen := map[int]int{}
	for i := range uint64(5000) {
		seen[d.Group(i)]++
	}
	if len(seen) != 5 || seen[0] < 800 || seen[4] < 800 {
		t.Errorf("groups: %v", seen)
	}
	if d.Group(7) != open(t, "shared-prefix:groups=5,prefix=10", Options{Seed: 3}).Group(7) {
		t.Error("groups not reproducible")
	}
}

// bigJSONL writes a JSON Lines file of about size bytes: lines of about
// 100 bytes, written a megabyte at a time.
func bigJSONL(t testing.TB, size int) (string, int) {
	var block bytes.Buffer
	lines := 0
	for block.Len() < 1<<20 {
		fmt.Fprintf(&block, "{\"prompt\": \"line %07d of a big file with some more words in it\", \"output_tokens\": %d}\n", lines, lines%100+1)
		lines++
	}
	p := filepath.Join(t.TempDir(), "big.jsonl")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for written := 0; written < size; written += block.Len() {
		if _, err := f.Write(block.Bytes()); err != nil {
			t.Fatal(err)
		}
		n += lines
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return p, n
}
