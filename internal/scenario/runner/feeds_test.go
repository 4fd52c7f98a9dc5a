package runner

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hail-loadgen/hail/internal/scenario"
)

// A flow takes one row per iteration: both of its requests carry the same
// row, whose columns stay together; sequential order walks the file in
// turn, unique uses each row once and then ends the run, random spreads
// over the rows — on every engine, from CSV and from JSON Lines.
func TestFeeds(t *testing.T) {
	t.Parallel()
	csvPath, jsonlPath := writeUsers(t, 50)
	for _, order := range []string{"sequential", "unique", "random"} {
		for _, file := range []string{csvPath, jsonlPath} {
			for _, eng := range engines(t) {
				t.Run(order+"/"+filepath.Ext(file)+"/"+eng, func(t *testing.T) {
					t.Parallel()
					rec, base := startRecorder(t)
					src := fmt.Sprintf(`
base: %s
connections: 4
requests: 200
feeds:
  users: {file: %s, order: %s}
steps:
  - {name: a, path: '/a/{{feed.users.id}}'}
  - {name: b, path: '/b/{{feed.users.id}}/{{feed.users.email}}'}
flows:
  - {name: f, steps: [a, b]}
`, base, file, order)
					res, _ := runFile(t, src, base, func(s *scenario.Scenario) { s.Settings.Engine = eng }, nil)
					as, bs := rec.counts("/a/"), rec.counts("/b/")
					total, seconds := 0, 0
					for key, n := range bs {
						id, email, _ := strings.Cut(key, "/")
						if email != id+"@x.org" || n > as[id] {
							t.Errorf("b request %q ×%d (a requests of %s: %d): a row's columns and a flow's row must stay together", key, n, id, as[id])
						}
						seconds += n
					}
					for _, n := range as {
						total += n
					}
					// Flows cut by the end of the run (one per connection at most) lack their b.
					if total-seconds > 4 || total < seconds {
						t.Errorf("%d flows began, %d second steps", total, seconds)
					}
					switch order {
					case "sequential":
						if total < 100 || len(as) != 50 {
							t.Errorf("sequential: %d flows over %d rows, want 100 over all 50 (each twice)", total, len(as))
						}
						for id, n := range as {
							if n < 2 || n > 3 {
								t.Errorf("row %s used %d times, want 2 (3 for the few the end of the run cut)", id, n)
							}
						}
					case "unique":
						if total != 50 || len(as) != 50 {
							t.Errorf("unique: %d flows over %d rows, want each of the 50 rows once", total, len(as))
						}
						info := res.Hail.Scenario
						if info == nil || !strings.Contains(info.EndedBy, "feed `users` used up") || len(info.Feeds) != 1 || info.Feeds[0].Used != 50 || info.Feeds[0].Refused == 0 {
							t.Errorf("unique: scenario info %+v", info)
						}
						for id, n := range as {
							if n != 1 {
								t.Errorf("unique: row %s used %d times", id, n)
							}
						}
					case "random":
						if total < 100 || len(as) < 30 {
							t.Errorf("random: %d flows over %d distinct rows, want 100 spread over most of the 50", total, len(as))
						}
					}
				})
			}
		}
	}
}

// A step of its own takes one row per request; when a unique feed is used
// up, only the steps that need it stop (counted as yields), the others go on.
func TestFeedUniqueEndsStep(t *testing.T) {
	t.Parallel()
	csvPath, _ := writeUsers(t, 20)
	rec, base := startRecorder(t)
	src := fmt.Sprintf(`
base: %s
connections: 2
requests: 300
feeds:
  users: {file: %s, order: unique}
steps:
  - {name: signup, path: '/s/{{feed.users.id}}'}
  - {name: browse, path: /}
`, base, csvPath)
	res, _ := runFile(t, src, base, nil, nil)
	if n := len(rec.counts("/s/")); n != 20 {
		t.Errorf("%d distinct signups, want 20", n)
	}
	s := step(t, res, "signup")
	if s.Counts.Requests != 20 || s.YieldReasons["feed `users` used up"] == 0 {
		t.Errorf("signup: %d requests, yields %v", s.Counts.Requests, s.YieldReasons)
	}
	if res.Hail.Counts.Requests != 300 || res.Hail.Scenario.EndedBy != "" {
		t.Errorf("%d requests (want 300: browse goes on), ended by %q", res.Hail.Counts.Requests, res.Hail.Scenario.EndedBy)
	}
}

// The shards of a distributed run split a unique feed: shard I takes rows
// I, I+N, …, so three shards together use each of the 50 rows once (each
// shard alone ending when its part is used up); a sequential feed is not
// split.
func TestFeedUniqueSharded(t *testing.T) {
	t.Parallel()
	csvPath, _ := writeUsers(t, 50)
	rec, base := startRecorder(t)
	src := fmt.Sprintf(`
base: %s
connections: 2
requests: 100
feeds:
  users: {file: %s, order: unique}
  again: {file: %s}
steps:
  - {name: signup, path: '/s/{{feed.users.id}}/{{feed.again.id}}'}
`, base, csvPath, csvPath)
	seq := 0
	for i := range 3 {
		_, sc := runFile(t, src, base, func(s *scenario.Scenario) { s.ShardFeeds(i, 3) }, nil)
		if want := len(sliceOf(50, i, 3)); sc.Feeds[0].Rows() != want || sc.Feeds[1].Rows() != 50 {
			t.Errorf("shard %d/3: unique feed of %d rows (want %d), sequential of %d (want 50)", i, sc.Feeds[0].Rows(), want, sc.Feeds[1].Rows())
		}
		seq += int(sc.Feeds[1].Used())
	}
	ids := map[string]int{}
	for key, n := range rec.counts("/s/") {
		id, _, _ := strings.Cut(key, "/")
		ids[id] += n
	}
	if len(ids) != 50 {
		t.Errorf("%d distinct rows used, want all 50", len(ids))
	}
	for id, n := range ids {
		if n != 1 {
			t.Errorf("row %s used %d times by the shards together, want once", id, n)
		}
	}
	if seq != 50 {
		t.Errorf("the sequential feed gave %d rows, want 50", seq)
	}
}

// sliceOf is the indices shard i of n takes of total rows.
func sliceOf(total, i, n int) []int {
	var out []int
	for k := i; k < total; k += n {
		out = append(out, k)
	}
	return out
}
