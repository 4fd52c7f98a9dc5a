package llmserve

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// protocols are the three ways the tests talk to the mock: a raw socket
// (HTTP/1.1 framing decoded by the test), net/http over HTTP/1.1, and
// net/http over h2c.
var protocols = []string{"raw", "http1", "h2c"}

// exchange is one request's response, whatever the protocol.
type exchange struct {
	status int
	events []event
	body   string
	broken bool // the response ended early: connection closed, stream reset
	header func(string) string
}

func post(t *testing.T, ts *testServer, proto, path, body string) exchange {
	t.Helper()
	if proto == "raw" {
		r := rawRequest(t, ts.addr, path, body)
		return exchange{r.status, r.events, r.body, r.closed, func(k string) string { return headerValue(r.head, k) }}
	}
	r := httpRequest(t, streamClient(t, proto == "h2c"), "http://"+ts.addr+path, body)
	if want := map[string]int{"http1": 1, "h2c": 2}[proto]; r.proto != want {
		t.Fatalf("HTTP/%d, want HTTP/%d", r.proto, want)
	}
	return exchange{r.status, r.events, r.body, r.err != nil, r.header.Get}
}

var (
	cmplID = regexp.MustCompile(`^cmpl-[0-9a-f]{16}$`)
	chatID = regexp.MustCompile(`^chatcmpl-[0-9a-f]{16}$`)
)

func keys(m map[string]json.RawMessage) []string { return slices.Sorted(maps.Keys(m)) }

// The streamed chunks have exactly the shapes OpenAI's and vLLM's servers
// send, on every protocol, with and without usage, with one or several
// tokens per chunk.
func TestStreamShapes(t *testing.T) {
	t.Parallel()
	for _, k := range []int{1, 3} {
		for _, noUsage := range []bool{false, true} {
			ts := startServer(t, Config{TokensPerChunk: k, NoUsage: noUsage, Model: "served"})
			for _, proto := range protocols {
				for _, api := range []string{"completions", "chat"} {
					for _, include := range []bool{false, true} {
						name := fmt.Sprintf("k=%d/nousage=%v/%s/%s/include_usage=%v", k, noUsage, proto, api, include)
						t.Run(name, func(t *testing.T) {
							checkStream(t, ts, proto, api, 7, include, include && !noUsage, k)
						})
					}
				}
			}
		}
	}
}

func checkStream(t *testing.T, ts *testServer, proto, api string, n int, include, wantUsage bool, k int) {
	opts := ""
	if include {
		opts = `,"stream_options":{"include_usage":true}`
	}
	path, body := "/v1/completions", fmt.Sprintf(`{"model":"m1","prompt":"a b  c\td","max_tokens":%d,"stream":true%s}`, n, opts)
	if api == "chat" {
		path = "/v1/chat/completions"
		body = fmt.Sprintf(`{"model":"m1","messages":[{"role":"system","content":"be brief"},{"role":"user","content":[{"type":"text","text":"a b"},{"type":"image_url","image_url":{"url":"x y"}}]}],"max_tokens":%d,"stream":true%s}`, n, opts)
	}
	x := post(t, ts, proto, path, body)
	if x.status != 200 || x.broken {
		t.Fatalf("status %d, broken %v", x.status, x.broken)
	}
	if ct := x.header("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q", ct)
	}
	evs := x.events
	if len(evs) == 0 || evs[len(evs)-1].data != "[DONE]" {
		t.Fatalf("the stream does not end with [DONE]: %v", evs)
	}
	evs = evs[:len(evs)-1]
	wantKeys := []string{"choices", "created", "id", "model", "object"}
	if wantUsage {
		wantKeys = append(wantKeys, "usage")
		slices.Sort(wantKeys)
	}
	var texts []string
	var id string
	for i, e := range evs {
		c := decodeChunk(t, e.data)
		if got := keys(c.raw); !slices.Equal(got, wantKeys) {
			t.Fatalf("event %d: keys %v, want %v: %s", i, got, wantKeys, e.data)
		}
		if id == "" {
			id = c.ID
		}
		if c.ID != id || c.Model != "m1" || c.Created <= 0 {
			t.Fatalf("event %d: id %q (first %q), model %q, created %d", i, c.ID, id, c.Model, c.Created)
		}
		last := i == len(evs)-1
		if wantUsage && last {
			if len(c.Choices) != 0 || c.Usage == nil {
				t.Fatalf("the last chunk is not the usage chunk: %s", e.data)
			}
			prompt := 4 // "a b  c\td"
			if api == "chat" {
				prompt = 4 // "be brief" + the text part "a b"
			}
			if c.Usage.Prompt != prompt || c.Usage.Completion != n || c.Usage.Total != prompt+n {
				t.Fatalf("usage %+v, want prompt %d, completion %d", *c.Usage, prompt, n)
			}
			continue
		}
		if wantUsage && string(c.raw["usage"]) != "null" {
			t.Fatalf("event %d: usage %s, want null", i, c.raw["usage"])
		}
		if len(c.Choices) != 1 {
			t.Fatalf("event %d: %d choices", i, len(c.Choices))
		}
		ch := c.Choices[0]
		switch api {
		case "completions":
			if c.Object != "text_completion" || !cmplID.MatchString(c.ID) {
				t.Fatalf("object %q, id %q", c.Object, c.ID)
			}
			if got := slices.Sorted(maps.Keys(ch)); !slices.Equal(got, []string{"finish_reason", "index", "logprobs", "stop_reason", "text"}) {
				t.Fatalf("choice keys %v", got)
			}
			lastContent := i == len(evs)-1 || wantUsage && i == len(evs)-2
			if want := map[bool]any{true: "length", false: nil}[lastContent]; ch["finish_reason"] != want {
				t.Fatalf("event %d: finish_reason %v, want %v", i, ch["finish_reason"], want)
			}
			texts = append(texts, ch["text"].(string))
		case "chat":
			if c.Object != "chat.completion.chunk" || !chatID.MatchString(c.ID) {
				t.Fatalf("object %q, id %q", c.Object, c.ID)
			}
			if got := slices.Sorted(maps.Keys(ch)); !slices.Equal(got, []string{"delta", "finish_reason", "index", "logprobs"}) {
				t.Fatalf("choice keys %v", got)
			}
			delta, _ := json.Marshal(ch["delta"])
			finishChunk := i == len(evs)-1 || wantUsage && i == len(evs)-2
			switch {
			case i == 0:
				if string(delta) != `{"content":"","role":"assistant"}` || ch["finish_reason"] != nil {
					t.Fatalf("the first chat chunk is not role-only: %s", e.data)
				}
			case finishChunk:
				if string(delta) != `{}` || ch["finish_reason"] != "length" {
					t.Fatalf("the last chat chunk is not an empty delta with finish_reason: %s", e.data)
				}
			default:
				if ch["finish_reason"] != nil {
					t.Fatalf("event %d: finish_reason %v", i, ch["finish_reason"])
				}
				texts = append(texts, ch["delta"].(map[string]any)["content"].(string))
			}
		}
	}
	// The first chunk carries one token, the others k (the last the rest).
	var want []string
	for left, m := n, 1; left > 0; left, m = left-m, k {
		want = append(want, strings.Repeat(tokenText, min(m, left)))
	}
	if !slices.Equal(texts, want) {
		t.Fatalf("texts %q, want %q", texts, want)
	}
}

// Non-streaming responses carry the whole text, the finish_reason and the
// usage (unless it is turned off).
func TestWholeShapes(t *testing.T) {
	t.Parallel()
	for _, noUsage := range []bool{false, true} {
		ts := startServer(t, Config{NoUsage: noUsage})
		for _, proto := range protocols {
			for _, api := range []string{"completions", "chat"} {
				t.Run(fmt.Sprintf("nousage=%v/%s/%s", noUsage, proto, api), func(t *testing.T) {
					path, body, object := "/v1/completions", `{"prompt":[1,2,3],"max_tokens":5}`, "text_completion"
					if api == "chat" {
						path, body, object = "/v1/chat/completions", `{"messages":[{"role":"user","content":"x y z"}],"max_completion_tokens":5}`, "chat.completion"
					}
					x := post(t, ts, proto, path, body)
					if x.status != 200 || x.broken || x.header("Content-Type") != "application/json" {
						t.Fatalf("status %d, broken %v, Content-Type %q", x.status, x.broken, x.header("Content-Type"))
					}
					var r struct {
						ID, Object, Model string
						Choices           []struct {
							Text         *string
							Message      *struct{ Role, Content string }
							FinishReason string `json:"finish_reason"`
						}
						Usage *struct {
							Prompt     int `json:"prompt_tokens"`
							Completion int `json:"completion_tokens"`
							Total      int `json:"total_tokens"`
						}
					}
					if err := json.Unmarshal([]byte(x.body), &r); err != nil {
						t.Fatalf("%v: %s", err, x.body)
					}
					if r.Object != object || r.Model != DefaultModel || len(r.Choices) != 1 || r.Choices[0].FinishReason != "length" {
						t.Fatalf("%s", x.body)
					}
					text := ""
					if api == "chat" {
						if m := r.Choices[0].Message; m != nil && m.Role == "assistant" {
							text = m.Content
						}
					} else if r.Choices[0].Text != nil {
						text = *r.Choices[0].Text
					}
					if text != strings.Repeat(tokenText, 5) {
						t.Fatalf("text %q: %s", text, x.body)
					}
					switch {
					case noUsage && r.Usage != nil:
						t.Fatalf("usage with NoUsage: %s", x.body)
					case !noUsage && (r.Usage == nil || r.Usage.Prompt != 3 || r.Usage.Completion != 5 || r.Usage.Total != 8):
						t.Fatalf("usage: %s", x.body)
					}
				})
			}
		}
	}
}

// Many streams at once on one HTTP/2 connection each get all their tokens.
func TestH2ConcurrentStreams(t *testing.T) {
	t.Parallel()
	ts := startServer(t, Config{ITL: mustDist(t, "1ms"), Stagger: true})
	client := streamClient(t, true)
	const streams, tokens = 64, 40
	httpRequest(t, client, "http://"+ts.addr+"/v1/completions", `{"prompt":"warm","max_tokens":1}`) // the connection, up first
	var wg sync.WaitGroup
	for i := range streams {
		wg.Go(func() {
			r, err := doHTTP(client, "http://"+ts.addr+"/v1/chat/completions", fmt.Sprintf(`{"messages":[{"role":"user","content":"s%d"}],"max_tokens":%d,"stream":true,"stream_options":{"include_usage":true}}`, i, tokens))
			if err != nil || r.err != nil || r.proto != 2 {
				t.Errorf("stream %d: %v", i, err)
				return
			}
			got := strings.Count(strings.Join(func() (d []string) {
				for _, e := range r.events {
					d = append(d, e.data)
				}
				return d
			}(), "\n"), `"content":"`+tokenText+`"`)
			if got != tokens || r.events[len(r.events)-1].data != "[DONE]" {
				t.Errorf("stream %d: %d tokens", i, got)
			}
		})
	}
	wg.Wait()
	if st := ts.Stats(); st.Connections != 1 || st.Completed != streams+1 || st.Tokens != streams*tokens+1 {
		t.Errorf("stats %+v", st)
	}
}
