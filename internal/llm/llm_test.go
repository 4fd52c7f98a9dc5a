package llm

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/hail-loadgen/hail/internal/http1"
)

func TestLengths(t *testing.T) {
	t.Parallel()
	bad := []string{"", "0", "-3", "x", "5-2", "1:0", "a:1", "normal:0,1", "normal:10", "normal:10,-1", "2000000"}
	for _, s := range bad {
		if _, err := ParseLengths(s); err == nil || !strings.Contains(err.Error(), "give N, LOW-HIGH") {
			t.Errorf("%q: error %v", s, err)
		}
	}
	const n = 20000
	draw := func(spec string) []int {
		l, err := ParseLengths(spec)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]int, n)
		for i := range out {
			out[i] = l.At(uint64(i), saltOut)
		}
		return out
	}
	for _, v := range draw("128") {
		if v != 128 {
			t.Fatalf("fixed: %d", v)
		}
	}
	seen := map[int]int{}
	for _, v := range draw("10-13") {
		seen[v]++
	}
	if len(seen) != 4 || seen[10] < n/5 || seen[13] < n/5 {
		t.Errorf("uniform 10-13: %v", seen)
	}
	seen = map[int]int{}
	for _, v := range draw("64:3,512:1") {
		seen[v]++
	}
	if len(seen) != 2 || math.Abs(float64(seen[64])/n-0.75) > 0.02 {
		t.Errorf("weighted: %v", seen)
	}
	var sum, sq float64
	vals := draw("normal:200,20")
	for _, v := range vals {
		sum += float64(v)
	}
	mean := sum / n
	for _, v := range vals {
		sq += (float64(v) - mean) * (float64(v) - mean)
	}
	if sd := math.Sqrt(sq / n); math.Abs(mean-200) > 1 || math.Abs(sd-20) > 1 {
		t.Errorf("normal:200,20: mean %.1f sd %.1f", mean, sd)
	}
	// The same request draws the same length; input and output differ.
	l, _ := ParseLengths("1-1000")
	again, _ := ParseLengths("1-1000")
	if l.At(5, saltIn) != again.At(5, saltIn) || l.At(5, saltIn) == l.At(5, saltOut) && l.At(6, saltIn) == l.At(6, saltOut) {
		t.Error("draws are not per request and per salt")
	}
}

func TestPromptWords(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, w := range words {
		if seen[w] || !strings.HasPrefix(w, " ") || strings.TrimSpace(w) != w[1:] || strings.ContainsAny(w, "\"\\") {
			t.Errorf("word %q: repeated, or not one space and a plain word", w)
		}
		seen[w] = true
	}
	p := string(appendPrompt(nil, words[:], 1000, 1, saltPrompt))
	if got := len(strings.Fields(p)); got != 1000 {
		t.Errorf("%d words for 1000 tokens", got)
	}
	if q := string(appendPrompt(nil, words[:], 1000, 2, saltPrompt)); q[:40] == p[:40] {
		t.Error("two requests' prompts share a prefix")
	}
}

// The built request is what a server reads: a POST whose JSON body asks
// for a stream of exactly the output length, with usage.
func TestBuilder(t *testing.T) {
	for _, api := range []API{Completions, Chat} {
		in, _ := ParseLengths("50")
		out, _ := ParseLengths("7")
		s := &Spec{API: api, Model: `m "x"`, Input: in, Output: out, Exact: true, Extra: `{"temperature": 0}`}
		if err := s.Init(); err != nil {
			t.Fatal(err)
		}
		var err error
		s.Head, s.Tail, err = SplitHead(http1.RequestSpec{Method: "POST", Target: "/v1" + api.Path(), Host: "h:1",
			Header: [][2]string{{"Content-Type", "application/json"}}})
		if err != nil {
			t.Fatal(err)
		}
		b := s.NewBuilder()
		raw, _, _, _ := b.Next(3)
		req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
		if err != nil {
			t.Fatalf("%s: %v\n%s", api, err, raw)
		}
		body, _ := io.ReadAll(req.Body)
		var got map[string]any
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatalf("%s: body %s: %v", api, body, err)
		}
		maxKey, promptKey := "max_tokens", "prompt"
		if api == Chat {
			maxKey, promptKey = "max_completion_tokens", "messages"
		}
		if got["model"] != `m "x"` || got[maxKey] != 7.0 || got["min_tokens"] != 7.0 || got["ignore_eos"] != true ||
			got["stream"] != true || got["temperature"] != 0.0 || got[promptKey] == nil || req.URL.Path != "/v1"+api.Path() {
			t.Errorf("%s: %s %v", api, req.URL.Path, got)
		}
		if so, _ := got["stream_options"].(map[string]any); so["include_usage"] != true {
			t.Errorf("%s: stream_options %v", api, got["stream_options"])
		}
		if a := testing.AllocsPerRun(100, func() { b.Next(4) }); a != 0 {
			t.Errorf("%s: %v allocations per request", api, a)
		}
	}
	if err := (&Spec{Extra: "[1]"}).Init(); err == nil || !strings.Contains(err.Error(), "not a JSON object") {
		t.Errorf("Extra [1]: %v", err)
	}
}

func TestAPIFromPath(t *testing.T) {
	t.Parallel()
	for path, want := range map[string]API{"/v1/completions": Completions, "/v1/chat/completions": Chat, "/openai/v1/chat/completions/": Chat, "/v1": "", "/": ""} {
		if got, ok := APIFromPath(path); got != want || ok != (want != "") {
			t.Errorf("%s: %q %v", path, got, ok)
		}
	}
}
