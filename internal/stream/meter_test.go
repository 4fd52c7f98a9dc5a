package stream

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/stats"
)

// piece is body bytes arriving at a time (ms since the run's start).
type piece struct {
	ms   int
	data string
}

// run feeds one stream to a fresh meter: the request intended at 0, sent
// at 1 ms, its head at 2 ms, the pieces, the end at end ms. It returns the
// failure (if any) and the recorded totals.
func run(t *testing.T, cfg *Config, pieces []piece, end int) (stats.ErrorKind, bool, *stats.Totals) {
	t.Helper()
	rec := stats.NewRecorder()
	m := NewMeter(cfg)
	m.Begin(rec, 7)
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	m.Time(ms(2), -1)
	m.StreamHead()
	for _, p := range pieces {
		m.Time(ms(p.ms), ms(p.ms)+50*time.Microsecond)
		m.StreamBody([]byte(p.data))
	}
	k, failed := m.Finish(ms(end), 0, ms(1))
	start := time.Now()
	col := stats.NewCollector([]*stats.Recorder{rec}, start)
	return k, failed, col.Finish(start)
}

// chat is a chat completion chunk with content c ("" for a role-only one).
func chat(c string) string {
	return fmt.Sprintf(`data: {"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":%q},"finish_reason":null}]}`+"\n\n", c)
}

const usage8 = `data: {"id":"x","choices":[],"usage":{"prompt_tokens":20,"completion_tokens":8,"total_tokens":28}}` + "\n\n"
const done = "data: [DONE]\n\n"

func TestTokensSpreadFromFinalUsage(t *testing.T) {
	t.Parallel()
	// A role-only chunk, then 4 content chunks 10 ms apart, usage says 8
	// tokens: 2 per chunk, so each 10 ms gap is two ITLs of 5 ms.
	pieces := []piece{{5, chat("")}, {10, chat("a")}, {20, chat("b")}, {30, chat("c")}, {40, chat("d")}, {41, usage8}, {41, done}}
	k, failed, tot := run(t, &Config{Tokens: true, Expect: func(uint64) (int, int) { return 16, 8 }, SLO: SLO{TTFT: 20 * time.Millisecond}}, pieces, 42)
	if failed {
		t.Fatalf("failed: %v", k)
	}
	s, tk := tot.Stream, tot.Stream.Tokens
	if s.Streams != 1 || s.Completed != 1 || s.Events != 7 {
		t.Errorf("streams %d completed %d events %d", s.Streams, s.Completed, s.Events)
	}
	if tk.OutSum != 8 || tk.InSum != 20 || tk.Sources[stats.FromSpread] != 1 || tk.OtherLength != 0 || tk.Good != 1 {
		t.Errorf("tokens %+v", *tk)
	}
	if got := tk.TTFT.Max(); !near(got, 10*time.Millisecond) {
		t.Errorf("TTFT %v, want 10ms (from the intended time, not the role-only chunk)", time.Duration(got))
	}
	if got := tk.TTFTSent.Max(); !near(got, 9*time.Millisecond) {
		t.Errorf("TTFT from send %v, want 9ms", time.Duration(got))
	}
	if got := tk.TPOT.Max(); !near(got, 30*time.Millisecond/7) {
		t.Errorf("TPOT %v, want 30ms/7", time.Duration(got))
	}
	if n, v := tk.ITL.TotalCount(), tk.ITL.Max(); n != 6 || !near(v, 5*time.Millisecond) {
		t.Errorf("ITL: %d values, max %v; want 6 of 5ms", n, time.Duration(v))
	}
	if n, v := tk.ChunkGap.TotalCount(), tk.ChunkGap.Max(); n != 3 || !near(v, 10*time.Millisecond) {
		t.Errorf("chunk gaps: %d, max %v; want 3 of 10ms", n, time.Duration(v))
	}
	if got := tk.E2E.Max(); !near(got, 42*time.Millisecond) {
		t.Errorf("E2E %v", time.Duration(got))
	}
	if tk.Series != 8 {
		t.Errorf("series tokens %d, want 8", tk.Series)
	}
	if got := s.ReadLag.Max(); !near(got, 50*time.Microsecond) {
		t.Errorf("read lag %v", time.Duration(got))
	}
	if got := s.Stall.Max(); !near(got, 10*time.Millisecond) {
		t.Errorf("longest stall %v", time.Duration(got))
	}
}

func TestTokensCumulativeUsage(t *testing.T) {
	t.Parallel()
	c := func(text string, cum int) string {
		return fmt.Sprintf(`data: {"choices":[{"text":%q}],"usage":{"prompt_tokens":3,"completion_tokens":%d}}`+"\n\n", text, cum)
	}
	// Chunks of 1, 3 and 2 tokens: ITL 3 × 4 ms after the 12 ms gap, 2 × 5 ms after the 10 ms one.
	pieces := []piece{{10, c("a", 1)}, {22, c("bcd", 4)}, {32, c("ef", 6)}, {33, `data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":6}}` + "\n\n" + done}}
	_, failed, tot := run(t, &Config{Tokens: true, Expect: func(uint64) (int, int) { return 3, 5 }}, pieces, 34)
	if failed {
		t.Fatal("failed")
	}
	tk := tot.Stream.Tokens
	if tk.OutSum != 6 || tk.Sources[stats.FromUsage] != 1 || tk.OtherLength != 1 {
		t.Errorf("tokens %+v", *tk)
	}
	if tk.ITL.TotalCount() != 5 || !near(tk.ITL.Min(), 4*time.Millisecond) || !near(tk.ITL.Max(), 5*time.Millisecond) {
		t.Errorf("ITL %d values %v..%v", tk.ITL.TotalCount(), time.Duration(tk.ITL.Min()), time.Duration(tk.ITL.Max()))
	}
}

func TestTokensPerDelta(t *testing.T) {
	t.Parallel()
	pieces := []piece{{10, chat("a") + chat("b")}, {20, chat("c") + done}}
	_, failed, tot := run(t, &Config{Tokens: true}, pieces, 21)
	tk := tot.Stream.Tokens
	if failed || tk.OutSum != 3 || tk.Sources[stats.FromDeltas] != 1 || tk.ITL.TotalCount() != 2 || tk.Good != 0 {
		t.Errorf("failed %v, tokens %+v", failed, *tk)
	}
}

// A piece stamped earlier than the one before it (a kernel receive time
// after one of hail's own clock, receive times turning on mid-stream)
// still makes one gap per event after the first, and one ITL per token
// after the first: 0, not a gap dropped.
func TestGapsNeverNegative(t *testing.T) {
	t.Parallel()
	pieces := []piece{{10, chat("a")}, {12, chat("b")}, {11, chat("c")}, {20, chat("d") + done}}
	_, failed, tot := run(t, &Config{Tokens: true}, pieces, 21)
	st, tk := tot.Stream, tot.Stream.Tokens
	if failed || st.Gap.TotalCount() != 4 || st.Gap.Min() > 1 || tk.ITL.TotalCount() != 3 || tk.ITL.Min() > 1 {
		t.Errorf("failed %v; gaps %d (min %d), ITL %d (min %d): want 4 event gaps and 3 ITLs, the smallest 0 (1 ns: the histograms' lowest)",
			failed, st.Gap.TotalCount(), st.Gap.Min(), tk.ITL.TotalCount(), tk.ITL.Min())
	}
}

func TestStreamFailures(t *testing.T) {
	t.Parallel()
	big := "data: " + strings.Repeat("x", 1000) + "\n\n"
	cases := []struct {
		name   string
		tokens bool
		pieces []piece
		want   stats.ErrorKind
	}{
		{"error event without JSON", true, []piece{{5, chat("a")}, {6, "event: error\ndata: overloaded\n\n"}, {7, done}}, stats.ErrStreamError},
		{"error object", true, []piece{{5, chat("a")}, {6, `data: {"error":{"message":"x"}}` + "\n\n" + done}}, stats.ErrStreamError},
		{"no [DONE]", true, []piece{{5, chat("a")}}, stats.ErrStreamNoDone},
		{"data after [DONE]", true, []piece{{5, chat("a") + done}, {6, chat("b")}}, stats.ErrStreamAfterDone},
		{"ended mid-event", true, []piece{{5, chat("a") + done + "data: {\"cho"}}, stats.ErrStreamMidEvent},
		{"no events", false, []piece{{5, ": ping\n\n"}}, stats.ErrStreamNoEvents},
		{"oversized event", false, []piece{{5, big}}, stats.ErrStreamTooLarge},
	}
	for _, c := range cases {
		k, failed, tot := run(t, &Config{Tokens: c.tokens, MaxEvent: 512}, c.pieces, 10)
		if !failed || k != c.want {
			t.Errorf("%s: failed %v as %v, want %v", c.name, failed, k, c.want)
			continue
		}
		if s := tot.Stream; s.Completed != 0 || (s.Tokens != nil && s.Tokens.Series != 0) {
			t.Errorf("%s: completed %d, series %+v", c.name, s.Completed, s.Tokens)
		}
	}
	// Without tokens a stream needs no terminator.
	if k, failed, _ := run(t, &Config{}, []piece{{5, "data: a\n\n"}}, 6); failed {
		t.Errorf("an event stream without [DONE] failed: %v", k)
	}
}

func TestTruncateAndIdle(t *testing.T) {
	t.Parallel()
	rec := stats.NewRecorder()
	m := NewMeter(&Config{Tokens: true, Idle: time.Second})
	m.Begin(rec, 1)
	if m.IdleAt() != 0 {
		t.Error("idle deadline before the stream began")
	}
	m.Time(2*time.Millisecond, -1)
	m.StreamHead()
	if got := m.IdleAt(); got != time.Second+2*time.Millisecond {
		t.Errorf("idle at %v after the head", got)
	}
	m.Time(9*time.Millisecond, -1)
	m.StreamBody([]byte(chat("a")))
	if got := m.IdleAt(); got != time.Second+9*time.Millisecond {
		t.Errorf("idle at %v after an event", got)
	}
	m.Truncate(50*time.Millisecond, 0, time.Millisecond)
	if m.IdleAt() != 0 || m.On() {
		t.Error("still a stream after Truncate")
	}
	start := time.Now()
	tot := stats.NewCollector([]*stats.Recorder{rec}, start).Finish(start)
	s := tot.Stream
	if s.Truncated != 1 || s.Completed != 0 || s.Tokens.TTFT.TotalCount() != 1 || s.Tokens.E2E.TotalCount() != 0 || s.Tokens.Series != 0 {
		t.Errorf("truncated %d completed %d ttft %d e2e %d series %d", s.Truncated, s.Completed, s.Tokens.TTFT.TotalCount(), s.Tokens.E2E.TotalCount(), s.Tokens.Series)
	}
	if tot.Requests() != 1 {
		t.Errorf("a truncated stream is a request: %d", tot.Requests())
	}
}

// TestMeterNoAllocs proves a stream's whole life allocates nothing once
// the meter's buffers have grown.
func TestMeterNoAllocs(t *testing.T) {
	rec := stats.NewRecorder()
	m := NewMeter(&Config{Tokens: true, Idle: time.Second, SLO: SLO{TTFT: time.Second}, Expect: func(uint64) (int, int) { return 1, 3 }})
	body := []byte(chat("") + chat("a") + chat("b") + chat("c") + usage8 + done)
	a := testing.AllocsPerRun(200, func() {
		m.Begin(rec, 1)
		m.Time(time.Millisecond, 2*time.Millisecond)
		m.StreamHead()
		for i := 0; i < len(body); i += 40 { // split mid-event
			m.Time(time.Duration(i)*time.Microsecond, time.Duration(i+1)*time.Microsecond)
			m.StreamBody(body[i:min(i+40, len(body))])
		}
		if _, failed := m.Finish(time.Second, 0, time.Millisecond); failed {
			t.Fatal("failed")
		}
	})
	if a != 0 {
		t.Errorf("%v allocations per stream", a)
	}
}

// near reports whether the histogram value v is d to HdrHistogram's
// precision.
func near(v int64, d time.Duration) bool {
	return v >= int64(d)*999/1000 && v <= int64(d)*1001/1000+1
}

func BenchmarkMeterEvent(b *testing.B) {
	rec := stats.NewRecorder()
	m := NewMeter(&Config{Tokens: true, Idle: time.Second})
	m.Begin(rec, 1)
	m.StreamHead()
	ev := []byte(chat(" token"))
	b.SetBytes(int64(len(ev)))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		m.Time(time.Duration(i), time.Duration(i))
		m.StreamBody(ev)
		if i%4096 == 4095 { // keep the gap buffers bounded (what flush recorded)
			m.flush()
			m.gaps, m.ks, m.chunkGaps = m.gaps[:0], m.ks[:0], 0
		}
	}
}
