package report

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/result"
)

// shardResult makes the Result of one shard from its totals, as a run
// would, starting offset after base.
func shardResult(t *testing.T, tot *stats.Totals, idx, n int, offset time.Duration, seconds int) *result.Result {
	t.Helper()
	var series []stats.Second
	per := tot.Requests() / int64(seconds)
	for k := range seconds {
		series = append(series, stats.Second{Index: k, Span: time.Second, Requests: per, P99: time.Duration(1000 * (k + 1)), CPU: 0.5, InFlight: 2})
	}
	r := Build(Input{Totals: tot, Series: series, Elapsed: time.Duration(seconds) * time.Second, Cores: 2,
		Usage: stats.Usage{User: time.Second, System: time.Second / 2, MaxRSS: int64(10+idx) << 20}, Engine: "net", Open: true, Rate: 300,
		Start: time.Unix(1700000000, 0).Add(offset), Config: map[string]any{"url": "http://127.0.0.1/", "rate": 900.0, "connections": 6}, Version: "test"})
	r.Hail.Shard = &result.Shard{Index: idx, Count: n, Rate: 300, Connections: 2, StartAt: "2023-11-14T22:13:20Z"}
	// Round-trip through JSON, as hail merge reads files.
	var buf bytes.Buffer
	if err := result.WriteJSON(&buf, r); err != nil {
		t.Fatal(err)
	}
	back, err := result.ReadJSON(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return back
}

func randomTotals(rng *rand.Rand, n int) *stats.Totals {
	tot := stats.NewTotals()
	for range n {
		v := int64(20_000 + rng.ExpFloat64()*300_000)
		if rng.IntN(50) == 0 {
			_ = tot.LatencyBad.RecordValue(v)
			tot.Status[503]++
		} else {
			_ = tot.LatencyOK.RecordValue(v)
			tot.Status[200]++
		}
		_ = tot.FirstByte.RecordValue(v / 2)
		_ = tot.Lag.RecordValue(int64(rng.IntN(30_000)))
		tot.LatencySum += v
		tot.BodyBytes += 12
	}
	tot.Errors[stats.ErrReset] = int64(rng.IntN(5))
	tot.Connects, tot.ConnectSum, tot.ConnectMin, tot.ConnectMax = 2, 100_000, 40_000, 60_000
	tot.DNSMin, tot.DNSMax = 0, 0
	return tot
}

// Merging shards equals building one result from all their measurements:
// counts exactly, and every percentile (the histograms add exactly).
func TestMergeExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	all := stats.NewTotals()
	var shards []*result.Result
	for i := range 3 {
		tot := randomTotals(rng, 3000+i*17)
		all.Add(tot)
		shards = append(shards, shardResult(t, tot, i, 3, time.Duration(i)*7*time.Millisecond, 3))
	}
	m, err := Merge(shards, []string{"s0.json", "s1.json", "s2.json"})
	if err != nil {
		t.Fatal(err)
	}
	one := Build(Input{Totals: all, Elapsed: 3 * time.Second, Cores: 6, Open: true, Rate: 900, Start: time.Unix(1700000000, 0)})
	if m.Hail.Counts.Requests != one.Hail.Counts.Requests || m.Hail.Counts.Responses != one.Hail.Counts.Responses ||
		m.Hail.Counts.Errors != one.Hail.Counts.Errors || m.Hail.Counts.BodyBytes != one.Hail.Counts.BodyBytes ||
		m.Hail.Counts.LatencySum != one.Hail.Counts.LatencySum {
		t.Errorf("counts %+v, want %+v", m.Hail.Counts, one.Hail.Counts)
	}
	if m.LatencyPercentiles != one.LatencyPercentiles || m.Summary.Average != one.Summary.Average || m.Hail.Lag != one.Hail.Lag {
		t.Errorf("percentiles %+v, want %+v", m.LatencyPercentiles, one.LatencyPercentiles)
	}
	if m.StatusCodeDistribution["503"] != one.StatusCodeDistribution["503"] || m.ErrorDistribution["connection reset by peer"] != one.ErrorDistribution["connection reset by peer"] {
		t.Errorf("distributions %v %v", m.StatusCodeDistribution, m.ErrorDistribution)
	}
	if len(m.Hail.Series) != 3 || m.Hail.Series[0].InFlight != 6 || m.Hail.Series[2].CPU != 1.5 {
		t.Errorf("series %+v", m.Hail.Series)
	}
	g := m.Hail.Generator
	if g.Cores != 6 || g.User.Seconds() != 3 || g.MaxRSSBytes != 12<<20 {
		t.Errorf("generator %+v", g)
	}
	if m.Hail.Merged == nil || m.Hail.Merged.Results != 3 || len(m.Hail.Merged.Shards) != 3 || len(m.Hail.Merged.Notes) == 0 {
		t.Errorf("merged %+v", m.Hail.Merged)
	}
	if m.Hail.Config["url"] != "http://127.0.0.1/" {
		t.Errorf("config %v", m.Hail.Config)
	}
	var text bytes.Buffer
	_ = WriteText(&text, m, TextOptions{})
	if !strings.Contains(text.String(), "Merged:\t3 results") {
		t.Errorf("text report lacks the merge:\n%s", text.String())
	}
}

// Series align by wall clock: a shard that started 2 s later fills seconds 2…
func TestMergeAlignsSeries(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	a := shardResult(t, randomTotals(rng, 300), 0, 2, 0, 3)
	b := shardResult(t, randomTotals(rng, 300), 1, 2, 2*time.Second+10*time.Millisecond, 3)
	m, err := Merge([]*result.Result{a, b}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Hail.Series) != 5 || m.Hail.Series[0].Requests != a.Hail.Series[0].Requests ||
		m.Hail.Series[2].Requests != a.Hail.Series[2].Requests+b.Hail.Series[0].Requests || m.Hail.Series[4].Requests != b.Hail.Series[2].Requests {
		t.Errorf("series %+v", m.Hail.Series)
	}
	if m.Summary.Total < 5*time.Second || m.Summary.Total > 5100*time.Millisecond {
		t.Errorf("total %v, want ~5.01 s", m.Summary.Total)
	}
}

func TestMergeRefuses(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	mk := func(i, n int) *result.Result { return shardResult(t, randomTotals(rng, 100), i, n, 0, 1) }
	other := mk(1, 3)
	other.Hail.Config["connections"] = 8.0
	for _, tc := range []struct {
		rs   []*result.Result
		want string
	}{
		{[]*result.Result{mk(0, 3), other, mk(2, 3)}, "config.connections is 6 in"},
		{[]*result.Result{mk(0, 3), mk(2, 3)}, "shard 1/3 missing"},
		{[]*result.Result{mk(0, 2), mk(0, 2)}, "shard 0/2 appears twice"},
		{[]*result.Result{mk(0, 2), mk(1, 3)}, "shard.count"},
	} {
		_, err := Merge(tc.rs, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
}

// Scenario steps merge step by step, exactly.
func TestMergeSteps(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var rs []*result.Result
	var sum int64
	for i := range 2 {
		r := shardResult(t, randomTotals(rng, 200), i, 2, 0, 2)
		ta, tb := randomTotals(rng, 120), randomTotals(rng, 80)
		ta.Stream = stats.NewStreams(false)
		ta.Stream.Truncated = 5 // streams the run's end cut: requests, neither responses nor errors
		sum += ta.Requests()
		r.Hail.Steps = BuildSteps([]string{"login", "browse"}, []*stats.Totals{ta, tb}, nil, 2*time.Second)
		rs = append(rs, r)
	}
	m, err := Merge(rs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Hail.Steps) != 2 || m.Hail.Steps[0].Name != "login" || m.Hail.Steps[0].Counts.Requests != sum {
		t.Fatalf("steps %+v", m.Hail.Steps)
	}
	if c := m.Hail.Steps[0].Counts; c.Truncated != 10 || c.Requests != c.Responses+c.Errors+c.Truncated {
		t.Errorf("login's counts %+v: want 10 truncated streams, and responses, errors and truncated adding up to the requests", c)
	}
}
