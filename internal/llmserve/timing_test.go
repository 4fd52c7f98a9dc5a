package llmserve

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/testtier"
)

// timing runs a timing check up to five times: the machine is shared (a
// virtual machine's scheduler stalls a timer by 10 ms now and then) and one
// slow moment must not fail the suite, while a real bias fails every
// attempt.
func timing(t *testing.T, check func() error) {
	t.Helper()
	var err error
	for attempt := 1; attempt <= 5; attempt++ {
		if err = check(); err == nil {
			return
		}
		t.Logf("attempt %d: %v", attempt, err)
	}
	if !testtier.On(testtier.Timing) {
		// The fast tier runs beside other packages' tests: five slow
		// moments in a row happen there. The timing tier (.ci/run, one
		// package at a time) holds the bound.
		t.Skipf("timing missed five times on a busy machine (%v); %s=1 enforces it", err, testtier.Timing)
	}
	t.Error(err)
}

func TestParseDist(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		mean time.Duration
		err  string
	}{
		{"20ms", 20 * time.Millisecond, ""},
		{"7", 7 * time.Millisecond, ""},
		{"0", 0, ""},
		{"uniform:10ms,30ms", 20 * time.Millisecond, ""},
		{"normal:20ms,5ms", 20 * time.Millisecond, ""},
		{"lognormal:20ms,10ms", 20 * time.Millisecond, ""},
		{"uniform:30ms,10ms", 0, "below the minimum"},
		{"lognormal:0,1ms", 0, "above 0"},
		{"normal:20ms", 0, "two durations"},
		{"gamma:1ms,2ms", 0, "unknown distribution"},
		{"-5ms", 0, "between 0 and"},
		{"11m", 0, "between 0 and"},
		{"fast", 0, "not a duration"},
		{"NaN", 0, "not a duration"},
	} {
		d, err := ParseDist(c.in)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: error %v, want one containing %q", c.in, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("%q: %v", c.in, err)
		case c.err == "" && (d.Mean() != c.mean || d.String() != c.in):
			t.Errorf("%q: mean %v, text %q", c.in, d.Mean(), d)
		}
	}
}

// The distributions' draws have the mean and spread asked for.
func TestDistDraws(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in       string
		mean, sd float64 // ms
		lo, hi   float64
	}{
		{"20ms", 20, 0, 20, 20},
		{"uniform:10ms,30ms", 20, 20 / math.Sqrt(12), 10, 30},
		{"normal:20ms,5ms", 20, 5, 0, math.Inf(1)},
		{"lognormal:20ms,10ms", 20, 10, 0, math.Inf(1)},
	} {
		d := mustDist(t, c.in)
		r := rand.New(rand.NewPCG(1, 2))
		const n = 200000
		var sum, sq float64
		for range n {
			v := float64(d.sample(r)) / 1e6
			if v < c.lo || v > c.hi {
				t.Fatalf("%s: draw %v outside [%v, %v]", c.in, v, c.lo, c.hi)
			}
			sum += v
			sq += v * v
		}
		mean := sum / n
		sd := math.Sqrt(sq/n - mean*mean)
		if math.Abs(mean-c.mean) > 0.01*c.mean || math.Abs(sd-c.sd) > 0.02*c.mean {
			t.Errorf("%s: mean %.3f ms, sd %.3f ms; want %.3f, %.3f", c.in, mean, sd, c.mean, c.sd)
		}
	}
}

// TTFT = queue wait + prefill × prompt tokens, then a token every ITL; with
// k tokens per chunk, a chunk every k ITLs. Checked from the client's side
// (the raw socket's read times) and against the log.
func TestTimeline(t *testing.T) {
	t.Parallel()
	const itl, prefill = 20 * time.Millisecond, time.Millisecond
	for _, k := range []int{1, 2} {
		t.Run(fmt.Sprintf("k=%d", k), func(t *testing.T) {
			t.Parallel()
			timing(t, func() error {
				ts := startServer(t, Config{ITL: mustDist(t, "20ms"), PrefillPerToken: prefill, Tick: -1, TokensPerChunk: k})
				x := rawRequest(t, ts.addr, "/v1/completions", `{"prompt":"one two three four five six seven eight nine ten","max_tokens":7,"stream":true}`)
				l := ts.lines(t, 1)[1]
				if l["arrival_clock"] != "kernel" {
					return fmt.Errorf("arrival clock %q", l["arrival_clock"])
				}
				arrival, admit, first := l.int("arrival_ns"), l.int("admit_ns"), l.int("first_token_ns")
				if admit < arrival || admit-arrival > int64(2*time.Millisecond) {
					return fmt.Errorf("admitted %v after arrival with a free slot", time.Duration(admit-arrival))
				}
				if d := time.Duration(first - admit); d < 10*prefill || d > 10*prefill+2*time.Millisecond {
					return fmt.Errorf("first token %v after admission, want the prefill of 10 tokens, %v", d, 10*prefill)
				}
				content := x.events[:len(x.events)-1]
				wantChunks := 1 + (7-1+k-1)/k
				if len(content) != wantChunks {
					return fmt.Errorf("%d chunks, want %d", len(content), wantChunks)
				}
				// Each chunk i > 0 is due at first + (tokens up to it) × ITL.
				tokens := 1
				for i, e := range content[1:] {
					tokens += min(k, 7-tokens)
					due := time.Unix(0, first).Add(time.Duration(tokens-1) * itl)
					if late := e.at.Sub(due); late < -time.Millisecond || late > 3*time.Millisecond {
						return fmt.Errorf("chunk %d read %v after it was due", i+1, late)
					}
				}
				return nil
			})
		})
	}
}

// With all slots busy, requests queue first in first out, and a queued
// request takes its slot exactly when a running one ends; at no time do more
// than Slots generate. Every other request comes over h2c: one queue for
// both protocols.
func TestSlotsQueue(t *testing.T) {
	t.Parallel()
	const slots, reqs = 2, 8
	ts := startServer(t, Config{Slots: slots, ITL: mustDist(t, "10ms"), Tick: -1})
	h2 := streamClient(t, true)
	var wg sync.WaitGroup
	ttft := make([]time.Duration, reqs)
	for i := range reqs {
		wg.Go(func() {
			time.Sleep(time.Duration(i) * 3 * time.Millisecond) // arrive in order
			// Request i's prompt has i+1 words: its log line is the one with i+1 prompt tokens.
			body := fmt.Sprintf(`{"prompt":%q,"max_tokens":5,"stream":true}`, strings.Repeat("w ", i+1))
			if i%2 == 1 {
				r, err := doHTTP(h2, "http://"+ts.addr+"/v1/completions", body)
				if err != nil || r.err != nil || r.proto != 2 || len(r.events) != 6 {
					t.Errorf("request %d (h2c): %v %+v", i+1, err, r)
					return
				}
				ttft[i] = r.events[0].at.Sub(r.started)
				return
			}
			x, err := sendRaw(ts.addr, "/v1/completions", body)
			if err != nil || len(x.events) != 6 {
				t.Errorf("request %d: %v", i+1, err)
				return
			}
			ttft[i] = x.events[0].at.Sub(x.started)
		})
	}
	deadline := time.Now().Add(testTimeout)
	for ts.Stats().Queued == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if st := ts.Stats(); st.Running != slots {
		t.Errorf("with requests queued: %d running, want %d", st.Running, slots)
	}
	wg.Wait()
	lines := ts.lines(t, reqs)
	ends := map[int64]bool{}
	type span struct{ admit, end int64 }
	var spans []span
	for _, l := range lines {
		ends[l.int("end_ns")] = true
		spans = append(spans, span{l.int("admit_ns"), l.int("end_ns")})
	}
	for id, l := range lines {
		admit, arrival := l.int("admit_ns"), l.int("arrival_ns")
		running := 0
		for _, s := range spans {
			if s.admit <= admit && admit < s.end {
				running++
			}
		}
		if running > slots {
			t.Errorf("request %d: %d requests generating when it was admitted", id, running)
		}
		// A request that found every slot busy is admitted exactly when
		// another ends; one that found a slot free waited only for the
		// machine (8 ms under the race detector on a loaded machine).
		busy := 0
		for _, s := range spans {
			if s.admit <= arrival && arrival < s.end {
				busy++
			}
		}
		if busy >= slots && admit > arrival && !ends[admit] {
			t.Errorf("request %d found every slot busy, waited %v, and was not admitted when another ended", id, time.Duration(admit-arrival))
		}
	}
	// The requests that waited for a slot have the wait in their TTFT.
	queued := 0
	for i := range reqs {
		for _, l := range lines {
			if l.int("prompt_tokens") != int64(i+1) {
				continue
			}
			wait := time.Duration(l.int("admit_ns") - l.int("arrival_ns"))
			if wait > 20*time.Millisecond {
				queued++
			}
			if ttft[i] < wait-time.Millisecond {
				t.Errorf("request %d: TTFT %v, less than its queue wait %v", i+1, ttft[i], wait)
			}
		}
	}
	if queued < reqs-2*slots {
		t.Errorf("%d requests waited more than 20 ms for a slot, want at least %d", queued, reqs-2*slots)
	}
	if st := ts.Stats(); st.Completed != reqs || st.Running != 0 || st.Queued != 0 || st.Tokens != 5*reqs {
		t.Errorf("stats after the run: %+v", st)
	}
}

// Stagger spreads first tokens over one ITL; without it, streams admitted
// together send together.
func TestStagger(t *testing.T) {
	t.Parallel()
	for _, stagger := range []bool{false, true} {
		t.Run(fmt.Sprint(stagger), func(t *testing.T) {
			t.Parallel()
			timing(t, func() error {
				ts := startServer(t, Config{ITL: mustDist(t, "40ms"), Stagger: stagger, Tick: -1})
				const n = 30
				var wg sync.WaitGroup
				for range n {
					wg.Go(func() {
						if _, err := sendRaw(ts.addr, "/v1/completions", `{"prompt":"p","max_tokens":2,"stream":true}`); err != nil {
							t.Error(err)
						}
					})
				}
				wg.Wait()
				var waits []time.Duration
				for _, l := range ts.lines(t, n) {
					waits = append(waits, time.Duration(l.int("first_token_ns")-l.int("admit_ns")))
				}
				slices.Sort(waits)
				switch spread := waits[n-1] - waits[0]; {
				case !stagger && waits[n-1] > 5*time.Millisecond:
					return fmt.Errorf("without stagger: first tokens up to %v after admission", waits[n-1])
				case stagger && (spread < 20*time.Millisecond || waits[n-1] > 45*time.Millisecond):
					return fmt.Errorf("with stagger: first tokens %v to %v after admission, want spread over [0, 40ms)", waits[0], waits[n-1])
				}
				return nil
			})
		})
	}
}

// The tick batches wake-ups: with a token due every 1 ms and a 10 ms tick,
// chunks go out in bursts at least a tick apart, never early, and the
// stream still ends on time.
func TestTick(t *testing.T) {
	t.Parallel()
	timing(t, func() error {
		ts := startServer(t, Config{ITL: mustDist(t, "1ms"), Tick: 10 * time.Millisecond, SendTime: true})
		x := rawRequest(t, ts.addr, "/v1/completions", `{"prompt":"p","max_tokens":60,"stream":true}`)
		l := ts.lines(t, 1)[1]
		first := l.int("first_token_ns")
		var bursts []int64
		for i, e := range x.events[:60] {
			sent := decodeChunk(t, e.data).SentNS
			if due := first + int64(i)*int64(time.Millisecond); sent < due-int64(100*time.Microsecond) {
				return fmt.Errorf("chunk %d sent %v early", i, time.Duration(due-sent))
			}
			if len(bursts) == 0 || sent-bursts[len(bursts)-1] > int64(2*time.Millisecond) {
				bursts = append(bursts, sent)
			}
		}
		for i := 1; i < len(bursts); i++ {
			if g := bursts[i] - bursts[i-1]; g < int64(9*time.Millisecond) {
				return fmt.Errorf("bursts %v apart, want a tick (10 ms)", time.Duration(g))
			}
		}
		if len(bursts) < 5 || len(bursts) > 8 {
			return fmt.Errorf("%d bursts for 60 ms of tokens at a 10 ms tick", len(bursts))
		}
		return nil
	})
}

// The log's arrival time is the kernel's receive time of the request: it
// falls between the client's write and the mock's reading, and first_token_ns
// is when the client's first token left.
func TestLogArrivalIsKernelTime(t *testing.T) {
	t.Parallel()
	timing(t, func() error {
		ts := startServer(t, Config{PrefillPerToken: 2 * time.Millisecond})
		c, err := net.Dial("tcp", ts.addr)
		if err != nil {
			return err
		}
		defer c.Close()
		br := bufio.NewReader(c)
		for i := int64(1); i <= 5; i++ {
			body := `{"prompt":"a b c","max_tokens":3,"stream":true}`
			sent := time.Now().UnixNano()
			fmt.Fprintf(c, "POST /v1/completions HTTP/1.1\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
			r := &rawResponse{}
			if err := r.read(br); err != nil {
				return err
			}
			got := r.events[0].at.UnixNano()
			l := ts.lines(t, int(i))[i]
			arrival, first := l.int("arrival_ns"), l.int("first_token_ns")
			if l["arrival_clock"] != "kernel" || arrival < sent || arrival-sent > int64(2*time.Millisecond) {
				return fmt.Errorf("request %d: arrival %v after the client's write (clock %s)", i, time.Duration(arrival-sent), l["arrival_clock"])
			}
			if first > got || got-first > int64(2*time.Millisecond) {
				return fmt.Errorf("request %d: first token read %v after the log's first_token_ns", i, time.Duration(got-first))
			}
			if l["tokens_sent"] != "3" || l["prompt_tokens"] != "3" || l["outcome"] != "complete" || l["proto"] != "http1" {
				return fmt.Errorf("log %v", l)
			}
		}
		return nil
	})
}

// A queued request whose client has gone is skipped: the slot goes to the
// next one in line at once. The first request holds the slot for a second
// (50 tokens 20 ms apart): with 6 tokens, a loaded machine once let it end
// before the second had queued.
func TestClientGoneWhileQueued(t *testing.T) {
	t.Parallel()
	ts := startServer(t, Config{Slots: 1, ITL: mustDist(t, "20ms"), Tick: -1})
	long := make(chan error)
	go func() {
		_, err := sendRaw(ts.addr, "/v1/completions", `{"prompt":"p","max_tokens":50,"stream":true}`)
		long <- err
	}()
	waitFor(t, func() bool { return ts.Stats().Running == 1 })
	c, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	body := `{"prompt":"p","max_tokens":6,"stream":true}`
	fmt.Fprintf(c, "POST /v1/completions HTTP/1.1\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	waitFor(t, func() bool { return ts.Stats().Queued == 1 })
	c.Close()
	third := make(chan error)
	go func() {
		_, err := sendRaw(ts.addr, "/v1/completions", `{"prompt":"p","max_tokens":2,"stream":true}`)
		third <- err
	}()
	waitFor(t, func() bool { return ts.Stats().Queued == 2 })
	if err := <-long; err != nil {
		t.Fatal(err)
	}
	if err := <-third; err != nil {
		t.Fatal(err)
	}
	lines := ts.lines(t, 3)
	if lines[2]["outcome"] != "client_gone" || lines[2]["admit_ns"] != "0" || lines[2]["tokens_sent"] != "0" {
		t.Errorf("the abandoned request: %v", lines[2])
	}
	if lines[3]["admit_ns"] != lines[1]["end_ns"] {
		t.Errorf("the third request was admitted at %s, the first ended at %s", lines[3]["admit_ns"], lines[1]["end_ns"])
	}
}

// A client that does not read fills its socket: the rest waits in the
// connection's backlog, other streams go on, and every byte arrives in order.
func TestSlowReader(t *testing.T) {
	t.Parallel()
	ts := startServer(t, Config{})
	c, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const n = 100000 // about 21 MB of chunks, more than loopback's socket buffers hold
	body := fmt.Sprintf(`{"prompt":"p","max_tokens":%d,"stream":true,"stream_options":{"include_usage":true}}`, n)
	fmt.Fprintf(c, "POST /v1/completions HTTP/1.1\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	// While this client sleeps, another stream is served on time.
	time.Sleep(200 * time.Millisecond)
	other := rawRequest(t, ts.addr, "/v1/completions", `{"prompt":"p","max_tokens":3,"stream":true}`)
	if len(other.events) != 4 {
		t.Fatalf("the other stream: %d events", len(other.events))
	}
	c.SetDeadline(time.Now().Add(testTimeout))
	r := &rawResponse{}
	if err := r.read(bufio.NewReader(c)); err != nil || r.closed {
		t.Fatalf("reading the slow stream: %v, closed %v, %d events, stats %+v", err, r.closed, len(r.events), ts.Stats())
	}
	tokens := 0
	for _, e := range r.events[:len(r.events)-2] {
		tokens += strings.Count(e.data, `"text":"`+tokenText+`"`)
	}
	u := decodeChunk(t, r.events[len(r.events)-2].data).Usage
	if tokens != n || u == nil || u.Completion != n || r.events[len(r.events)-1].data != "[DONE]" {
		t.Fatalf("%d tokens, usage %+v, last %q", tokens, u, r.events[len(r.events)-1].data)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting")
		}
		time.Sleep(time.Millisecond)
	}
}

// A client that leaves mid-stream frees its slot at the next chunk, and is
// logged as gone; Close logs the requests still generating or queued as
// unfinished, the generating ones with their admission time.
func TestLeavingAndClosing(t *testing.T) {
	t.Parallel()
	log := &syncBuffer{}
	s, err := New(Config{Addr: "127.0.0.1:0", Slots: 1, ITL: mustDist(t, "5ms"), Tick: -1, Log: log, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Listen()
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	ts := &testServer{Server: s, addr: a.String(), log: log}
	leave := dial(t, ts)
	leave.send(post11("/v1/completions", `{"prompt":"p","max_tokens":1000,"stream":true}`))
	if _, err := readHead(leave.br); err != nil { // the head; then the client leaves
		t.Fatal(err)
	}
	leave.c.Close()
	l := ts.lines(t, 1)[1]
	if l["outcome"] != "client_gone" || l["tokens_sent"] == "1000" {
		t.Errorf("the client that left: %v", l)
	}
	waitFor(t, func() bool { return s.Stats().Running == 0 })
	running, queued := dial(t, ts), dial(t, ts)
	running.send(post11("/v1/completions", `{"prompt":"p","max_tokens":1000,"stream":true}`))
	waitFor(t, func() bool { return s.Stats().Running == 1 })
	queued.send(post11("/v1/completions", `{"prompt":"p","max_tokens":1000,"stream":true}`))
	waitFor(t, func() bool { return s.Stats().Queued == 1 })
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	lines := ts.lines(t, 3)
	if l := lines[2]; l["outcome"] != "unfinished" || l["admit_ns"] == "0" || l["tokens_sent"] == "0" {
		t.Errorf("the generating request at Close: %v", l)
	}
	if l := lines[3]; l["outcome"] != "unfinished" || l["admit_ns"] != "0" {
		t.Errorf("the queued request at Close: %v", l)
	}
}

// A client that leaves while its stream waits a long time for its next
// token (here 10 minutes) frees its batch slot within goneCheck, not at
// that token: the request queued behind it is served at once. Over
// HTTP/1.1 (the connection's end of file) and h2c (the stream's reset).
func TestLeavingDuringALongGap(t *testing.T) {
	t.Parallel()
	for _, h2 := range []bool{false, true} {
		t.Run(fmt.Sprintf("h2=%v", h2), func(t *testing.T) {
			t.Parallel()
			ts := startServer(t, Config{Slots: 1, ITL: mustDist(t, "10m"), Tick: -1})
			body := `{"prompt":"p","max_tokens":5,"stream":true}`
			if h2 {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				req, _ := http.NewRequestWithContext(ctx, "POST", "http://"+ts.addr+"/v1/completions", strings.NewReader(body))
				resp, err := streamClient(t, true).Do(req)
				if err != nil {
					t.Fatal(err)
				}
				br := bufio.NewReader(resp.Body)
				if l, err := br.ReadString('\n'); err != nil || !strings.HasPrefix(l, "data: ") {
					t.Fatalf("first event: %q, %v", l, err)
				}
				cancel() // the client leaves after the first token
				resp.Body.Close()
			} else {
				leave := dial(t, ts)
				leave.send(post11("/v1/completions", body))
				if _, err := readHead(leave.br); err != nil {
					t.Fatal(err)
				}
				leave.br.ReadString('\n') // the chunk's size
				if l, err := leave.br.ReadString('\n'); err != nil || !strings.HasPrefix(l, "data: ") {
					t.Fatalf("first event: %q, %v", l, err)
				}
				leave.c.Close()
			}
			// The next request (one token, which needs no gap) waits only
			// until the slot is freed.
			start := time.Now()
			x := rawRequest(t, ts.addr, "/v1/completions", `{"prompt":"p","max_tokens":1,"stream":true}`)
			if waited := time.Since(start); len(x.events) != 2 || waited > goneCheck+time.Second {
				t.Fatalf("the next request: %d events after %v (the slot held by a client gone)", len(x.events), waited)
			}
			lines := ts.lines(t, 2)
			if l := lines[1]; l["outcome"] != "client_gone" || l["tokens_sent"] != "1" {
				t.Errorf("the client that left: %v", l)
			}
			if lines[2]["admit_ns"] != lines[1]["end_ns"] {
				t.Errorf("the next request was admitted at %s, the first ended at %s", lines[2]["admit_ns"], lines[1]["end_ns"])
			}
		})
	}
}
