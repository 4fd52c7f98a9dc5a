package llmserve

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

func mustFault(t testing.TB, s string) Fault {
	t.Helper()
	f, err := ParseFault(s)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestParseFault(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in, want, err string
	}{
		{"429:5", "429:5:1s", ""},
		{"503:2.5:3s", "503:2.5:3s", ""},
		{"error:1", "error:1", ""},
		{"drop:100%", "drop:100", ""},
		{"stall:1:250ms", "stall:1:250ms", ""},
		{"stall:1", "", "needs its length"},
		{"error:1:2s", "", "takes no duration"},
		{"boom:1", "", "unknown fault"},
		{"429:0", "", "above 0"},
		{"429:101", "", "at most 100"},
		{"429:x", "", "must be a number"},
		{"429", "", "KIND:PERCENT"},
		{"stall:1:11m", "", "between 0 and"},
	} {
		f, err := ParseFault(c.in)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: error %v, want one containing %q", c.in, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("%q: %v", c.in, err)
		case c.err == "" && f.String() != c.want:
			t.Errorf("%q: %v, want %s", c.in, f, c.want)
		}
	}
	if _, err := New(Config{Faults: []Fault{mustFault(t, "429:60"), mustFault(t, "drop:50")}}); err == nil || !strings.Contains(err.Error(), "110%") {
		t.Errorf("a mix of 110%%: %v", err)
	}
}

// contentTokens counts the tokens in an exchange's content chunks and finds
// its error event, if any.
func contentTokens(t *testing.T, x exchange) (tokens int, errEvent string) {
	t.Helper()
	for _, e := range x.events {
		if e.data == "[DONE]" {
			continue
		}
		c := decodeChunk(t, e.data)
		if c.Error != nil {
			errEvent = string(c.Error)
			continue
		}
		if s, ok := c.text(); ok {
			tokens += strings.Count(s, tokenText)
		}
	}
	return tokens, errEvent
}

// Every fault on every protocol, at 100%: what the client sees, and the log
// line that says what the mock did.
func TestFaults(t *testing.T) {
	t.Parallel()
	const n = 12
	stream := fmt.Sprintf(`{"prompt":"p","max_tokens":%d,"stream":true}`, n)
	whole := fmt.Sprintf(`{"prompt":"p","max_tokens":%d}`, n)
	for _, proto := range protocols {
		t.Run(proto, func(t *testing.T) {
			t.Parallel()
			t.Run("429", func(t *testing.T) {
				ts := startServer(t, Config{Faults: []Fault{mustFault(t, "429:100")}})
				x := post(t, ts, proto, "/v1/completions", stream)
				if x.status != 429 || x.header("Retry-After") != "1" || !strings.Contains(x.body, `"code":429`) {
					t.Fatalf("status %d, Retry-After %q, body %s", x.status, x.header("Retry-After"), x.body)
				}
				l := ts.lines(t, 1)[1]
				if l["outcome"] != "rejected" || l["fault"] != "429" || l["admit_ns"] != "0" || l["status"] != "429" {
					t.Fatalf("log %v", l)
				}
				if st := ts.Stats(); st.Rejected != 1 || st.Running != 0 {
					t.Fatalf("stats %+v", st)
				}
			})
			t.Run("503", func(t *testing.T) {
				ts := startServer(t, Config{Faults: []Fault{mustFault(t, "503:100:2500ms")}})
				x := post(t, ts, proto, "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}]}`)
				if x.status != 503 || x.header("Retry-After") != "3" {
					t.Fatalf("status %d, Retry-After %q", x.status, x.header("Retry-After"))
				}
			})
			t.Run("error", func(t *testing.T) {
				ts := startServer(t, Config{Faults: []Fault{mustFault(t, "error:100")}})
				for i := 1; i <= 4; i++ {
					x := post(t, ts, proto, "/v1/completions", stream)
					tokens, ev := contentTokens(t, x)
					l := ts.lines(t, i)[int64(i)]
					if x.status != 200 || x.broken || ev == "" || !strings.Contains(ev, `"code":500`) {
						t.Fatalf("status %d, broken %v, error event %q", x.status, x.broken, ev)
					}
					if last := x.events[len(x.events)-1].data; last != "[DONE]" {
						t.Fatalf("after the error event: %q, want [DONE]", last)
					}
					if strconv.Itoa(tokens) != l["fault_at"] || l["tokens_sent"] != l["fault_at"] || l["outcome"] != "error_event" {
						t.Fatalf("%d tokens before the error event; log %v", tokens, l)
					}
				}
				x := post(t, ts, proto, "/v1/completions", whole)
				if x.status != 500 || !strings.Contains(x.body, `"code":500`) {
					t.Fatalf("non-streaming: status %d, body %s", x.status, x.body)
				}
			})
			t.Run("drop", func(t *testing.T) {
				ts := startServer(t, Config{Faults: []Fault{mustFault(t, "drop:100")}})
				for i := 1; i <= 3; i++ {
					x := post(t, ts, proto, "/v1/completions", stream)
					tokens, _ := contentTokens(t, x)
					l := ts.lines(t, i)[int64(i)]
					if !x.broken || strconv.Itoa(tokens) != l["fault_at"] || l["outcome"] != "dropped" {
						t.Fatalf("broken %v after %d tokens; log %v", x.broken, tokens, l)
					}
				}
				if proto == "raw" {
					if r, err := sendRaw(ts.addr, "/v1/completions", whole); err == nil {
						t.Fatalf("non-streaming drop: a response: status %d", r.status)
					}
				}
			})
			t.Run("stall", func(t *testing.T) {
				const stall = 300 * time.Millisecond
				ts := startServer(t, Config{ITL: mustDist(t, "2ms"), Tick: -1, Faults: []Fault{mustFault(t, "stall:100:300ms")}})
				x := post(t, ts, proto, "/v1/completions", stream)
				tokens, _ := contentTokens(t, x)
				l := ts.lines(t, 1)[1]
				if x.broken || tokens != n || l["outcome"] != "complete" || l["fault"] != "stall" {
					t.Fatalf("broken %v, %d tokens; log %v", x.broken, tokens, l)
				}
				// Chunks before fault_at come at once; from fault_at on, after the stall.
				at, _ := strconv.Atoi(l["fault_at"])
				admit := time.Unix(0, l.int("admit_ns"))
				for i, e := range x.events[:n] {
					if since := e.at.Sub(admit); (i >= at) != (since >= stall) {
						t.Fatalf("chunk %d came %v after admission; the stall (%v) is before chunk %d", i, since, stall, at)
					}
				}
			})
		})
	}
}

// The faults of a mix strike the shares asked for, at positions spread over
// the response, and request i's draws depend only on the seed and i.
func TestFaultMix(t *testing.T) {
	t.Parallel()
	run := func() (string, map[string]int, map[string]int) {
		ts := startServer(t, Config{Seed: 7, Faults: []Fault{mustFault(t, "429:20"), mustFault(t, "error:30"), mustFault(t, "drop:10")}})
		for range 200 {
			post(t, ts, "raw", "/v1/completions", `{"prompt":"p","max_tokens":4,"stream":true}`)
		}
		lines := ts.lines(t, 200)
		kinds, at := map[string]int{}, map[string]int{}
		var seq strings.Builder
		for i := int64(1); i <= 200; i++ {
			kinds[lines[i]["fault"]]++
			if lines[i]["fault"] == "error" {
				at[lines[i]["fault_at"]]++
			}
			seq.WriteString(lines[i]["fault"] + lines[i]["fault_at"] + " ")
		}
		return seq.String(), kinds, at
	}
	seq1, kinds, at := run()
	// Binomial(200, p): within about 4 standard deviations.
	for kind, p := range map[string]float64{"429": .2, "error": .3, "drop": .1, "none": .4} {
		want, sd := 200*p, 4*math.Sqrt(200*p*(1-p))
		if got := float64(kinds[kind]); got < want-sd || got > want+sd {
			t.Errorf("%s: %v of 200, want %v ± %.0f", kind, got, want, sd)
		}
	}
	for _, pos := range []string{"0", "1", "2", "3"} {
		if at[pos] == 0 {
			t.Errorf("no error fault after %s tokens: %v", pos, at)
		}
	}
	if seq2, _, _ := run(); seq2 != seq1 {
		t.Errorf("the same seed drew different faults:\n%s\n%s", seq1, seq2)
	}
}
