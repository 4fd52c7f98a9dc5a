package tui

import (
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/stats"
)

// A scenario's per-step totals reach the view as one row per step.
func TestSamplerStepRows(t *testing.T) {
	create, query := stats.NewRecorder(), stats.NewRecorder()
	start := time.Now().Add(-2 * time.Second)
	c := stats.NewStepCollector([][]*stats.Recorder{{create}, {query}}, start)
	for range 70 {
		create.Response(201, 2e6, 1e6, 20, 100)
	}
	for range 30 {
		query.Response(200, 1e6, 5e5, 40, 100)
	}
	query.Error(stats.ErrTimeout)
	query.Error(stats.ErrCheckJSON)
	query.Response(404, 1e6, 5e5, 10, 50)
	c.Tick(start.Add(time.Second))
	s := sampler{names: []string{"create", "query"}, extra: func(i int) (int64, int64) { return int64(i + 1), int64(10 * (i + 1)) }}
	var d Data
	if !s.sample(c, &d) {
		t.Fatal("no change sampled after a tick")
	}
	if len(d.Steps) != 2 {
		t.Fatalf("%d step rows, want 2", len(d.Steps))
	}
	cr, q := d.Steps[0], d.Steps[1]
	if cr.Name != "create" || cr.Requests != 70 || cr.RPS != 70 || cr.P50 < 1_990_000 || cr.P50 > 2_010_000 {
		t.Errorf("create row %+v", cr)
	}
	if q.Name != "query" || q.Requests != 33 || q.Errors != 2 || q.Checks != 1 || q.Misses != 2 || q.Yields != 20 {
		t.Errorf("query row %+v", q)
	}
	if len(q.Status) != 2 || q.Status[0] != (Count{"200", 30}) || q.Status[1] != (Count{"404", 1}) {
		t.Errorf("query status codes %v", q.Status)
	}
	single := sampler{names: []string{""}}
	var d2 Data
	c.Tick(start.Add(2 * time.Second))
	single.sample(c, &d2)
	if len(d2.Steps) != 0 {
		t.Errorf("a single-step run shows %d step rows", len(d2.Steps))
	}
}
