package llm

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hail-loadgen/hail/internal/dataset"
	"github.com/hail-loadgen/hail/internal/http1"
	"github.com/hail-loadgen/hail/internal/tokenizer"
)

// spec is a prepared Spec for api with the given dataset (nil: random).
func spec(t testing.TB, api API, d *dataset.Dataset, in, out string) *Spec {
	t.Helper()
	il, err := ParseLengths(in)
	if err != nil {
		t.Fatal(err)
	}
	ol, err := ParseLengths(out)
	if err != nil {
		t.Fatal(err)
	}
	s := &Spec{API: api, Model: "m", Input: il, Output: ol, Exact: true, Data: d, Seed: 7}
	if err := s.Init(); err != nil {
		t.Fatal(err)
	}
	s.Head, s.Tail, err = SplitHead(http1.RequestSpec{Method: "POST", Target: "/v1" + api.Path(), Host: "h:1",
		Header: [][2]string{{"Content-Type", "application/json"}}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// body reads the JSON body of a built request.
func body(t testing.TB, raw []byte) map[string]any {
	t.Helper()
	req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
	if err != nil {
		t.Fatalf("%v\n%s", err, raw)
	}
	b, _ := io.ReadAll(req.Body)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("body %s: %v", b, err)
	}
	return m
}

func openData(t testing.TB, spec string, o dataset.Options) *dataset.Dataset {
	t.Helper()
	s, err := dataset.ParseSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	d, err := dataset.Open(s, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	return d
}

// Requests from a JSON Lines file carry its prompts and chats as they
// are, its output lengths (else --output-tokens'), and Expect says what
// each asked.
func TestJSONLRequests(t *testing.T) {
	p := filepath.Join(t.TempDir(), "d.jsonl")
	os.WriteFile(p, []byte(`{"prompt": "say \"hi\" to\nme", "output_tokens": 9}
{"messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "why is the sky blue"}]}
`), 0o644)
	d := openData(t, "jsonl:"+p, dataset.Options{Order: dataset.Sequential})
	s := spec(t, Chat, d, "5", "3")
	b := s.NewBuilder()
	raw, _, _, _ := b.Next(0)
	m := body(t, raw)
	msgs := m["messages"].([]any)
	if c := msgs[0].(map[string]any)["content"]; c != "say \"hi\" to\nme" || m["max_completion_tokens"] != 9.0 || m["min_tokens"] != 9.0 {
		t.Errorf("request 0: %v", m)
	}
	if in, out := s.Expect(0); in != 4 || out != 9 {
		t.Errorf("request 0 expects %d, %d", in, out)
	}
	raw, _, _, _ = b.Next(1)
	m = body(t, raw)
	if msgs := m["messages"].([]any); len(msgs) != 2 || msgs[1].(map[string]any)["content"] != "why is the sky blue" || m["max_completion_tokens"] != 3.0 {
		t.Errorf("request 1: %v", m)
	}
	if in, out := s.Expect(1); in != 7 || out != 3 {
		t.Errorf("request 1 expects %d, %d", in, out)
	}
	// A request built long ago (its place in the ring taken): read again.
	b.Next(1 + 1<<16)
	if in, out := s.Expect(1); in != 7 || out != 3 {
		t.Errorf("request 1, evicted, expects %d, %d", in, out)
	}
	if a := testing.AllocsPerRun(100, func() { b.Next(2) }); a != 0 {
		t.Errorf("%v allocations per request", a)
	}
	// Completions carry a prompt record as the prompt.
	d = openData(t, "jsonl:"+p, dataset.Options{Order: dataset.Sequential})
	raw, _, _, _ = spec(t, Completions, d, "5", "3").NewBuilder().Next(0)
	if m := body(t, raw); m["prompt"] != "say \"hi\" to\nme" || m["max_tokens"] != 9.0 {
		t.Errorf("completion: %v", m)
	}
}

// Requests from a ShareGPT file: the first human turn, asking for the
// reply's length.
func TestShareGPTRequests(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "s.json")
	os.WriteFile(p, []byte(`[{"conversations": [{"from": "human", "value": "tell me a story"}, {"from": "gpt", "value": "once upon a time there was"}]}]`), 0o644)
	d := openData(t, "sharegpt:"+p, dataset.Options{})
	s := spec(t, Completions, d, "5", "3")
	raw, _, _, _ := s.NewBuilder().Next(4)
	if m := body(t, raw); m["prompt"] != "tell me a story" || m["max_tokens"] != 6.0 {
		t.Errorf("request: %v", m)
	}
	if in, out := s.Expect(4); in != 4 || out != 6 {
		t.Errorf("expects %d, %d", in, out)
	}
}

// A shared-prefix load: requests of one group start with the same
// prefix words, then their own suffix; the groups' prefixes differ.
func TestSharedPrefixRequests(t *testing.T) {
	t.Parallel()
	d := openData(t, "shared-prefix:groups=3,prefix=50", dataset.Options{Seed: 7})
	s := spec(t, Completions, d, "20", "4")
	b := s.NewBuilder()
	prefixes := map[int]string{}
	suffixes := map[string]bool{}
	for hit := uint64(0); hit < 60; hit++ {
		raw, _, _, _ := b.Next(hit)
		prompt := strings.Fields(body(t, raw)["prompt"].(string))
		if len(prompt) != 70 {
			t.Fatalf("request %d: %d words", hit, len(prompt))
		}
		if in, out := s.Expect(hit); in != 70 || out != 4 {
			t.Fatalf("request %d expects %d, %d", hit, in, out)
		}
		g := d.Group(hit)
		pre := strings.Join(prompt[:50], " ")
		if have, ok := prefixes[g]; ok && have != pre {
			t.Fatalf("request %d: group %d's prefix differs", hit, g)
		}
		prefixes[g] = pre
		suf := strings.Join(prompt[50:], " ")
		if suffixes[suf] {
			t.Fatalf("request %d: a suffix repeats", hit)
		}
		suffixes[suf] = true
	}
	if len(prefixes) != 3 || prefixes[0] == prefixes[1] || prefixes[1] == prefixes[2] {
		t.Errorf("%d groups, prefixes %v", len(prefixes), prefixes)
	}
}

// A trace's requests have its lengths.
func TestTraceRequests(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "t.csv")
	os.WriteFile(p, []byte("TIMESTAMP,ContextTokens,GeneratedTokens\n1,30,5\n2,12,7\n"), 0o644)
	d := openData(t, "azure:"+p, dataset.Options{})
	s := spec(t, Chat, d, "5", "3")
	raw, _, _, _ := s.NewBuilder().Next(1)
	m := body(t, raw)
	content := m["messages"].([]any)[0].(map[string]any)["content"].(string)
	if len(strings.Fields(content)) != 12 || m["max_completion_tokens"] != 7.0 {
		t.Errorf("request 1: %v", m)
	}
}

// The seed changes every request's words and drawn lengths, and the same
// seed makes them again.
func TestSeed(t *testing.T) {
	t.Parallel()
	build := func(seed uint64) (string, int) {
		s := spec(t, Completions, nil, "10-1000", "10-1000")
		s.Seed = seed
		raw, _, _, _ := s.NewBuilder().Next(3)
		_, out := s.Expect(3)
		return body(t, raw)["prompt"].(string), out
	}
	a, aout := build(1)
	b, bout := build(2)
	c, cout := build(1)
	if a == b || aout == bout || a != c || aout != cout {
		t.Errorf("seeds 1, 2, 1: %d %d %d output tokens, prompts differ %v, repeat %v", aout, bout, cout, a != b, a == c)
	}
}

func TestLognormal(t *testing.T) {
	t.Parallel()
	l, err := ParseLengths("lognormal:200,100")
	if err != nil {
		t.Fatal(err)
	}
	const n = 40000
	var sum, sq float64
	for i := range uint64(n) {
		v := float64(l.At(i, saltOut))
		sum += v
		sq += v * v
	}
	mean := sum / n
	sd := math.Sqrt(sq/n - mean*mean)
	if math.Abs(mean-200) > 4 || math.Abs(sd-100) > 6 {
		t.Errorf("lognormal:200,100: mean %.1f sd %.1f", mean, sd)
	}
	for _, bad := range []string{"lognormal:0,1", "lognormal:5", "lognormal:5,-1"} {
		if _, err := ParseLengths(bad); err == nil || !strings.Contains(err.Error(), "lognormal needs") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

// With a tokenizer, prompts are made of words that are one token each
// with it: a prompt of N words counts N tokens.
func TestTokenizerWords(t *testing.T) {
	t.Parallel()
	tok, err := tokenizer.Load("../tokenizer/testdata/gpt2.json")
	if err != nil {
		t.Fatal(err)
	}
	s := &Spec{API: Completions, Counter: tok}
	if err := s.Init(); err == nil || !strings.Contains(err.Error(), "one token each") {
		t.Errorf("a tokenizer with two one-token words: %v", err)
	}
	// A byte-level tokenizer that holds 200 of the words whole (as
	// ignore_merges lets Llama 3's): the prompts use those, and a prompt
	// of N words is N tokens.
	vocab := map[string]int{}
	for b := range 256 {
		vocab[string(rune(b+256))] = len(vocab)
	}
	for c := 'a'; c <= 'z'; c++ {
		vocab[string(c)] = len(vocab)
	}
	for _, w := range words[:200] {
		vocab["Ġ"+w[1:]] = len(vocab)
	}
	js, _ := json.Marshal(map[string]any{"pre_tokenizer": map[string]any{"type": "ByteLevel", "add_prefix_space": false},
		"model": map[string]any{"type": "BPE", "ignore_merges": true, "vocab": vocab, "merges": []string{}}})
	tok, err = tokenizer.Parse(js)
	if err != nil {
		t.Fatal(err)
	}
	s = spec(t, Completions, nil, "300", "3")
	s.Counter = tok
	if err := s.Init(); err != nil || len(s.words) != 200 {
		t.Fatalf("%d words, %v", len(s.words), err)
	}
	raw, _, _, _ := s.NewBuilder().Next(5)
	if n := tok.Count([]byte(body(t, raw)["prompt"].(string))); n != 300 {
		t.Errorf("a prompt of 300 words is %d tokens", n)
	}
}

// FuzzParseLengths reads any length spec: what it accepts draws lengths
// from 1 to its bound.
func FuzzParseLengths(f *testing.F) {
	for _, s := range []string{"128", "10-20", "64:3,512:1", "normal:128,32", "lognormal:100,300", "lognormal:1,0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := ParseLengths(s)
		if err != nil {
			return
		}
		for hit := range uint64(50) {
			if n := l.At(hit, saltIn); n < 1 || n > maxLength {
				t.Fatalf("%q: request %d draws %d", s, hit, n)
			}
		}
	})
}

// A multi-turn user's turns carry the history so far, and building them
// allocates nothing once the user's buffers have grown.
func TestMultiTurnBuilder(t *testing.T) {
	s := spec(t, Chat, nil, "4", "3")
	s.Multi = &MultiTurn{Turns: 3, Users: 2}
	if err := s.Init(); err != nil {
		t.Fatal(err)
	}
	u := s.NewUser(1)
	var lens []int
	for hit := uint64(0); hit < 6; hit++ {
		raw, _, _, _ := u.Next(hit)
		msgs := body(t, raw)["messages"].([]any)
		lens = append(lens, len(msgs))
		if in, out := s.Expect(hit); out != 3 || in != 4+7*(len(msgs)/2) {
			t.Errorf("turn %d: expects %d, %d with %d messages", hit, in, out, len(msgs))
		}
		u.Done(0, &http1.Parser{Status: 200})
	}
	if fmt.Sprint(lens) != "[1 3 5 1 3 5]" {
		t.Errorf("messages by turn %v", lens)
	}
	// A failed turn ends the conversation.
	u.Next(6)
	u.Done(0, nil)
	if raw, _, _, _ := u.Next(7); len(body(t, raw)["messages"].([]any)) != 1 {
		t.Error("the conversation went on after a failed turn")
	}
	ok := &http1.Parser{Status: 200}
	hit := uint64(8)
	if a := testing.AllocsPerRun(100, func() { u.Next(hit); u.Done(0, ok); hit++ }); a != 0 {
		t.Errorf("%v allocations per turn", a)
	}
}

// BenchmarkBuild is the cost of building one request: made up, from a
// JSON Lines record, and a multi-turn turn.
func BenchmarkBuild(b *testing.B) {
	p := filepath.Join(b.TempDir(), "d.jsonl")
	var lines strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&lines, "{\"prompt\": %q, \"output_tokens\": 128}\n", strings.Repeat(fmt.Sprintf("word%d ", i), 500))
	}
	os.WriteFile(p, []byte(lines.String()), 0o644)
	for _, c := range []struct {
		name string
		s    func() *Builder
	}{
		{"random-512", func() *Builder { return spec(b, Chat, nil, "512", "128").NewBuilder() }},
		{"jsonl-500-words", func() *Builder {
			return spec(b, Chat, openData(b, "jsonl:"+p, dataset.Options{}), "5", "128").NewBuilder()
		}},
		{"multi-turn-4x128", func() *Builder {
			s := spec(b, Chat, nil, "128", "128")
			s.Multi = &MultiTurn{Turns: 4, Users: 1}
			s.Init()
			return s.NewUser(0)
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			bl := c.s()
			ok := &http1.Parser{Status: 200}
			b.ReportAllocs()
			for i := range b.N {
				bl.Next(uint64(i))
				bl.Done(0, ok)
			}
		})
	}
}
