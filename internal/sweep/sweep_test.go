package sweep

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/internal/stream"
)

// server is a model of a server of a given capacity: a rate up to it
// passes; the closed model's throughput is a little below it.
func server(capacity float64) func(float64) (Step, error) {
	return func(rate float64) (Step, error) {
		if rate == 0 {
			return Step{Throughput: capacity * 0.97, Requests: 100, Met: 50}, nil
		}
		met := 100
		if rate > capacity {
			met = 90
		}
		return Step{Requests: 100, Met: met, Throughput: min(rate, capacity)}, nil
	}
}

func TestSearch(t *testing.T) {
	t.Parallel()
	cfg := Config{Steps: 5, Precision: 0.02, MaxBisect: 8}
	for _, capacity := range []float64{0.5, 10, 77, 1000} {
		res, err := Search(cfg, server(capacity))
		if err != nil {
			t.Fatal(err)
		}
		if res.Answer > capacity || res.Answer < capacity*0.97 || res.Failed <= capacity || res.Failed > res.Answer*1.03 {
			t.Errorf("capacity %g: answer %g, failed at %g", capacity, res.Answer, res.Failed)
		}
		if res.Steps[0].Kind != "closed" || res.Steps[1].Rate != res.Ceiling/5 {
			t.Errorf("capacity %g: steps %+v", capacity, res.Steps)
		}
		if len(res.Steps) > 1+5+4+8 {
			t.Errorf("capacity %g: %d steps", capacity, len(res.Steps))
		}
	}
	// Nothing passes: the answer is 0, the bisection goes down.
	res, err := Search(cfg, func(rate float64) (Step, error) {
		if rate == 0 {
			return Step{Throughput: 10}, nil
		}
		return Step{Requests: 10, Met: 1}, nil
	})
	if err != nil || res.Answer != 0 || res.Failed > 2 {
		t.Errorf("nothing passes: %+v %v", res, err)
	}
	// An interrupt keeps what was measured.
	n := 0
	res, err = Search(cfg, func(rate float64) (Step, error) {
		if n++; n == 3 {
			return Step{}, ErrStopped
		}
		return server(10)(rate)
	})
	if err != nil || !res.Interrupted || len(res.Steps) != 2 || res.Answer != 0 {
		t.Errorf("interrupted: %+v %v", res, err)
	}
	var b strings.Builder
	res.WriteText(&b, "ttft=1s")
	if !strings.Contains(b.String(), "Interrupted") || !strings.Contains(b.String(), "closed") {
		t.Errorf("text:\n%s", b.String())
	}
	// A failing step's error ends the search with it.
	boom := errors.New("boom")
	if _, err := Search(cfg, func(float64) (Step, error) { return Step{}, boom }); err != boom {
		t.Errorf("error %v", err)
	}
	if _, err := Search(cfg, func(float64) (Step, error) { return Step{}, nil }); err == nil || !strings.Contains(err.Error(), "no ceiling") {
		t.Errorf("no ceiling: %v", err)
	}
}

// A window counts the requests meant to be sent inside it, each against
// every objective, and its percentiles.
func TestWindow(t *testing.T) {
	t.Parallel()
	ms := int64(time.Millisecond)
	w := &Window{From: time.Second, To: 3 * time.Second, SLO: stream.SLO{TTFT: 100 * time.Millisecond, TPOT: 10 * time.Millisecond},
		Expect: func(uint64) (int, int) { return 10, 11 }}
	rec := func(intended, ttft, rest int64, status int32) *stats.TraceRecord {
		return &stats.TraceRecord{Intended: intended * ms, FirstToken: (intended + ttft) * ms, End: (intended + ttft + rest) * ms, Status: status}
	}
	w.Add(rec(500, 50, 50, 200))   // in the warm-up
	w.Add(rec(1000, 50, 50, 200))  // met: TPOT 5ms
	w.Add(rec(1500, 150, 50, 200)) // TTFT missed
	w.Add(rec(2000, 50, 200, 200)) // TPOT 20ms missed
	w.Add(rec(2500, 50, 50, 500))  // failed
	failed := rec(2600, 0, 0, 0)
	failed.FirstToken = 0
	failed.SetError(1)
	w.Add(failed)
	w.Add(rec(3000, 50, 50, 200))     // after the window
	counted := rec(2900, 50, 90, 200) // its own token counts: 10 tokens, TPOT 10ms
	counted.OutTokens, counted.LastToken = 10, counted.End
	w.Add(counted)
	s := w.Step("step", 2)
	if s.Requests != 6 || s.Completed != 4 || s.Met != 2 || s.Passed() || math.Abs(s.Goodput-1) > 1e-9 || math.Abs(s.TokensPerSec-21.5) > 1e-9 {
		t.Errorf("%+v", s)
	}
	if s.TTFT50 != 50*time.Millisecond || s.TTFT99 != 150*time.Millisecond || s.TPOT99 != 20*time.Millisecond {
		t.Errorf("percentiles %+v", s)
	}
}
