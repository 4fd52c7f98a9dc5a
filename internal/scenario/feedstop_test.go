package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hail-loadgen/hail/result"
)

// A unique feed that runs out stops the steps that need it: they are no
// longer chosen (the run under -z reported ~140,000 "yields" for a 3-row
// feed, one per time the step was drawn), the others go on, and the report
// says the step stopped and why.
func TestUniqueFeedStopsItsStep(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	csv := filepath.Join(dir, "users.csv")
	if err := os.WriteFile(csv, []byte("id\n1\n2\n3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := mustParse(t, "base: http://127.0.0.1:1\nduration: 10s\nfeeds: {users: {file: "+csv+", order: unique}}\n"+
		"steps:\n  - {name: login, path: '/?u={{feed.users.id}}', weight: 1}\n  - {name: browse, path: /, weight: 9}\n")
	v := newVU(s, 0)
	steps := map[int]int{}
	for hit := range uint64(20_000) {
		if _, step, _, ok := v.Next(hit); ok {
			steps[step]++
		}
	}
	if steps[0] != 3 || steps[1] != 20_000-3 {
		t.Errorf("login %d, browse %d: want login 3 times, browse the rest", steps[0], steps[1])
	}
	rs := []result.StepResult{{Name: "login"}, {Name: "browse"}}
	AnnotateSteps(s.Steps, rs)
	if rs[0].Yields > 1 || !strings.Contains(rs[0].Stopped, "feed `users` used up (order: unique, 3 rows)") || rs[1].Stopped != "" {
		t.Errorf("login: %d yields, stopped %q; browse stopped %q", rs[0].Yields, rs[0].Stopped, rs[1].Stopped)
	}
	select {
	case <-s.Ended():
		t.Error("the run ended although browse can still run")
	default:
	}
}
