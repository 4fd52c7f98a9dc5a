package report

import (
	"bytes"
	"fmt"
	"github.com/hail-loadgen/hail/result"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// A run with a failed, missing, late or interrupted shard merges only when
// told to, names each such shard, and is marked incomplete in every report.
func TestMergeIncomplete(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	mk := func(i int) *result.Result { return shardResult(t, randomTotals(rng, 200), i, 3, 0, 2) }
	s0, s2 := mk(0), mk(2)
	if _, err := Merge([]*result.Result{s0, s2}, nil); err == nil || !strings.Contains(err.Error(), "shard 1/3 missing") || !strings.Contains(err.Error(), "--partial") {
		t.Fatalf("a missing shard: %v", err)
	}
	for _, tc := range []struct {
		opt  MergeOptions
		want string
	}{
		{MergeOptions{Partial: true}, "shard 1/3: no result"},
		{MergeOptions{Failed: map[int]string{1: "OOMKilled (exit code 137)"}}, "shard 1/3 failed: OOMKilled (exit code 137)"},
	} {
		m, err := MergeWith([]*result.Result{s0, s2}, nil, tc.opt)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Hail.Merged.Incomplete; len(got) != 1 || got[0] != tc.want {
			t.Errorf("%+v: incomplete %q, want %q", tc.opt, got, tc.want)
		}
		if m.Hail.Counts.Requests != s0.Hail.Counts.Requests+s2.Hail.Counts.Requests {
			t.Errorf("counts %d, want the two shards' %d", m.Hail.Counts.Requests, s0.Hail.Counts.Requests+s2.Hail.Counts.Requests)
		}
		checkMarked(t, m, tc.want)
	}
	for _, tc := range []struct {
		rs     []*result.Result
		failed map[int]string
		want   string
	}{
		{[]*result.Result{s0, s2}, map[int]string{1: "x", 5: "y"}, "failed shard 5: the run has shards 0 to 2"},
		{nil, map[int]string{0: "x"}, "every shard failed"},
	} {
		if _, err := MergeWith(tc.rs, nil, MergeOptions{Failed: tc.failed}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}

	// A shard given as failed that wrote a result (stopped from outside,
	// it writes what it did) is merged, its line saying both; the merge
	// says per shard what it got.
	s1 := mk(1)
	s1.Hail.Interrupted = true
	m, err := MergeWith([]*result.Result{s0, s1, s2}, nil, MergeOptions{Failed: map[int]string{1: "pod deleted"}})
	if err != nil {
		t.Fatal(err)
	}
	want := "shard 1/3 was interrupted after 2s (pod deleted): its share of the run was not all sent; what it did is merged"
	if got := m.Hail.Merged.Incomplete; len(got) != 1 || got[0] != want {
		t.Errorf("incomplete %q, want %q", got, want)
	}
	if m.Hail.Counts.Requests != s0.Hail.Counts.Requests+s1.Hail.Counts.Requests+s2.Hail.Counts.Requests {
		t.Errorf("the interrupted shard's requests are not merged: %d", m.Hail.Counts.Requests)
	}
	checkMarked(t, m, want)
	ps := m.Hail.Merged.PerShard
	if len(ps) != 3 || ps[0].Outcome != OutcomeComplete || ps[1].Outcome != OutcomeInterrupted || !ps[1].Merged ||
		ps[1].Requests != s1.Hail.Counts.Requests || ps[1].Reason != "pod deleted" || ps[2].Outcome != OutcomeComplete {
		t.Errorf("per shard %+v", ps)
	}
	var text bytes.Buffer
	_ = WriteText(&text, m, TextOptions{})
	if line := fmt.Sprintf("shard 1/3: interrupted after 2s, %d requests merged (pod deleted)", s1.Hail.Counts.Requests); !strings.Contains(text.String(), line) {
		t.Errorf("the text report lacks %q:\n%s", line, text.String())
	}
	s1.Hail.Interrupted = false
	if m, err = MergeWith([]*result.Result{s0, s1, s2}, nil, MergeOptions{Failed: map[int]string{1: "exit code 3"}}); err != nil ||
		len(m.Hail.Merged.Incomplete) != 1 || m.Hail.Merged.Incomplete[0] != "shard 1/3 failed (exit code 3) after writing its result: merged" ||
		m.Hail.Merged.PerShard[1].Outcome != OutcomeFailed {
		t.Errorf("failed with a result: %v %q %+v", err, m.Hail.Merged.Incomplete, m.Hail.Merged.PerShard)
	}
	m, _ = MergeWith([]*result.Result{s0, s2}, nil, MergeOptions{Failed: map[int]string{1: "ImagePullBackOff"}})
	if ps := m.Hail.Merged.PerShard; len(ps) != 3 || ps[1].Outcome != OutcomeFailed || ps[1].Merged || OutcomeLine(ps[1], 3) != "shard 1/3: failed, no result (ImagePullBackOff)" {
		t.Errorf("failed without a result: %+v", ps)
	}

	// Late beyond LateStart, or interrupted: merged, and marked.
	s1.Hail.Shard.Late = 16200 * time.Millisecond
	s2.Hail.Interrupted = true
	s0.Hail.Shard.Late = LateStart / 2 // a moment late: on time
	m, err = Merge([]*result.Result{s0, s1, s2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := m.Hail.Merged.Incomplete
	if len(got) != 2 || !strings.HasPrefix(got[0], "shard 1/3 started 16.2s after --start-at") || !strings.HasPrefix(got[1], "shard 2/3 was interrupted after 2s") {
		t.Errorf("incomplete %q", got)
	}
	checkMarked(t, m, "shard 1/3 started 16.2s after")

	// A complete run is not marked.
	s2.Hail.Interrupted = false
	s1.Hail.Shard.Late = 0
	m, err = Merge([]*result.Result{s0, s1, s2}, nil)
	if err != nil || len(m.Hail.Merged.Incomplete) != 0 {
		t.Fatalf("complete run: %v, incomplete %q", err, m.Hail.Merged.Incomplete)
	}
	var html bytes.Buffer
	text.Reset()
	_ = WriteText(&text, m, TextOptions{})
	_ = WriteHTML(&html, m)
	if strings.Contains(text.String(), "INCOMPLETE") || strings.Contains(html.String(), "INCOMPLETE") {
		t.Error("a complete run is marked incomplete")
	}
}

// checkMarked checks that the text, HTML and markdown reports and the
// JSON round trip all carry the incomplete mark and the reason.
func checkMarked(t *testing.T, m *result.Result, why string) {
	t.Helper()
	var text, html, md, js bytes.Buffer
	_ = WriteText(&text, m, TextOptions{})
	_ = WriteHTML(&html, m)
	_ = WriteMarkdown(&md, m)
	_ = result.WriteJSON(&js, m)
	for name, out := range map[string]string{"text": text.String(), "html": html.String(), "markdown": md.String()} {
		if !strings.Contains(out, "INCOMPLETE") || !strings.Contains(out, why) {
			t.Errorf("%s report does not say the run is incomplete (%q)", name, why)
		}
	}
	back, err := result.ReadJSON(&js)
	if err != nil || back.Hail.Merged == nil || len(back.Hail.Merged.Incomplete) != len(m.Hail.Merged.Incomplete) {
		t.Errorf("JSON round trip lost the incomplete mark: %v", err)
	}
}

// Shards on one machine share its cores: they count once, up to its CPUs.
func TestMergeCoresPerMachine(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	var rs []*result.Result
	for i, id := range []string{"boot-a", "boot-a", "boot-b", ""} {
		r := shardResult(t, randomTotals(rng, 100), i, 4, 0, 1)
		r.Hail.Generator.Machine, r.Hail.Generator.MachineCPUs = id, 2
		if id == "" {
			r.Hail.Generator.MachineCPUs = 0
		}
		rs = append(rs, r)
	}
	m, err := Merge(rs, nil)
	if err != nil {
		t.Fatal(err)
	}
	// boot-a: two shards of 2 cores on a 2-CPU machine = 2; boot-b: 2; unknown: 2.
	if m.Hail.Generator.Cores != 6 {
		t.Errorf("cores %d, want 6", m.Hail.Generator.Cores)
	}
	if !strings.Contains(strings.Join(m.Hail.Merged.Notes, "\n"), "shard 0/4, shard 1/4 ran on one machine (2 CPUs)") {
		t.Errorf("notes %q", m.Hail.Merged.Notes)
	}
}
