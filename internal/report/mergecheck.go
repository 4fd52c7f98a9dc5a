package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/hail-loadgen/hail/result"
	"sort"
	"strings"
	"time"
)

// checkMergeable returns an error naming the first field on which the
// results disagree, or a missing or repeated shard. Shards opt allows to be
// absent (failed, or missing with Partial) are returned, one line each.
func checkMergeable(results []*result.Result, name func(int) string, opt MergeOptions) ([]string, error) {
	first := results[0]
	keys := map[string]bool{}
	for _, r := range results {
		for k := range r.Hail.Config {
			keys[k] = true
		}
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for i, r := range results[1:] {
		for _, k := range sorted {
			a, _ := json.Marshal(first.Hail.Config[k])
			b, _ := json.Marshal(r.Hail.Config[k])
			if !bytes.Equal(a, b) {
				return nil, fmt.Errorf("the results do not belong to one run: config.%s is %s in %s but %s in %s", k, a, name(0), b, name(i+1))
			}
		}
		if r.Hail.Model != first.Hail.Model {
			return nil, fmt.Errorf("the results do not belong to one run: model is %s in %s but %s in %s", first.Hail.Model, name(0), r.Hail.Model, name(i+1))
		}
	}
	sharded := 0
	for _, r := range results {
		if r.Hail.Shard != nil {
			sharded++
		}
	}
	switch {
	case sharded == 0 && len(opt.Failed) > 0:
		return nil, fmt.Errorf("a failed shard is given, but the results are not shards (--shard) of one run")
	case sharded == 0:
		return nil, nil
	case sharded != len(results):
		return nil, fmt.Errorf("some results are shards (--shard) and some are not: merge the shards of one run")
	}
	return checkShards(results, name, opt)
}

// checkShards checks that the shards belong to one run and are each there
// once; it returns the lines for the shards opt allows to be absent.
func checkShards(results []*result.Result, name func(int) string, opt MergeOptions) ([]string, error) {
	first := results[0].Hail.Shard
	n := first.Count
	seen := map[int]string{}
	for i, r := range results {
		s := r.Hail.Shard
		if s.Count != n {
			return nil, fmt.Errorf("the results do not belong to one run: shard.count is %d in %s but %d in %s", n, name(0), s.Count, name(i))
		}
		if prev, dup := seen[s.Index]; dup {
			return nil, fmt.Errorf("shard %d/%d appears twice: %s and %s", s.Index, n, prev, name(i))
		}
		seen[s.Index] = name(i)
		if s.StartAt != first.StartAt {
			return nil, fmt.Errorf("the results do not belong to one run: shard.start_at is %q in %s but %q in %s", first.StartAt, name(0), s.StartAt, name(i))
		}
	}
	for k := range opt.Failed {
		if k < 0 || k >= n {
			return nil, fmt.Errorf("failed shard %d: the run has shards 0 to %d", k, n-1)
		}
	}
	var absent, missing []string
	for k := range n {
		if _, ok := seen[k]; ok {
			continue
		}
		switch why, failed := opt.Failed[k]; {
		case failed:
			absent = append(absent, fmt.Sprintf("shard %d/%d failed: %s", k, n, why))
		case opt.Partial:
			absent = append(absent, fmt.Sprintf("shard %d/%d: no result", k, n))
		default:
			missing = append(missing, fmt.Sprintf("%d/%d", k, n))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("shard %s missing: merge needs the result of every shard of the run (--partial merges the others and marks the run incomplete)", strings.Join(missing, ", "))
	}
	return absent, nil
}

// resultLabel names result i in merge notes: its shard ("shard 1/3") if it
// was one, else name(i).
func resultLabel(r *result.Result, name func(int) string, i int) string {
	if s := r.Hail.Shard; s != nil {
		return fmt.Sprintf("shard %d/%d", s.Index, s.Count)
	}
	return name(i)
}

// lateOrInterrupted returns a line for each result that started more than
// LateStart after the agreed --start-at, was interrupted, or is given as
// failed (a shard stopped from outside writes its result as it goes: that
// partial result is merged, and the line says what happened to it).
func lateOrInterrupted(results []*result.Result, name func(int) string, failed map[int]string) []string {
	var out []string
	for i, r := range results {
		label := resultLabel(r, name, i)
		why := ""
		if s := r.Hail.Shard; s != nil {
			if late := s.Late; late > LateStart {
				out = append(out, fmt.Sprintf("%s started %s after --start-at (it was scheduled late): its share of the load ran that much later than planned",
					label, late.Round(time.Millisecond)))
			}
			why = failed[s.Index]
		}
		switch {
		case r.Hail.Interrupted && why != "":
			out = append(out, fmt.Sprintf("%s was interrupted after %s (%s): its share of the run was not all sent; what it did is merged", label,
				r.Summary.Total.Round(time.Millisecond), why))
		case r.Hail.Interrupted:
			out = append(out, fmt.Sprintf("%s was interrupted after %s: its share of the run was not all sent", label,
				r.Summary.Total.Round(time.Millisecond)))
		case why != "":
			out = append(out, fmt.Sprintf("%s failed (%s) after writing its result: merged", label, why))
		}
	}
	return out
}

// mergeCores is the generator cores of the merged run: results that ran on
// one machine (the same kernel boot id) share its CPUs, so they count at
// most its CPUs; each other result counts its own. It also returns a note
// per shared machine.
func mergeCores(results []*result.Result, name func(int) string) (int, []string) {
	type machine struct {
		cores, cpus int
		who         []string
	}
	var order []string
	byID := map[string]*machine{}
	total := 0
	for i, r := range results {
		g := r.Hail.Generator
		if g.Machine == "" {
			total += g.Cores
			continue
		}
		m := byID[g.Machine]
		if m == nil {
			m = &machine{}
			byID[g.Machine] = m
			order = append(order, g.Machine)
		}
		m.cores += g.Cores
		m.cpus = max(m.cpus, g.MachineCPUs)
		m.who = append(m.who, resultLabel(r, name, i))
	}
	var notes []string
	for _, id := range order {
		m := byID[id]
		c := m.cores
		if m.cpus > 0 {
			c = min(c, m.cpus)
		}
		total += c
		if len(m.who) > 1 {
			notes = append(notes, fmt.Sprintf("%s ran on one machine (%d CPUs): they shared its cores, counted once (%d)", strings.Join(m.who, ", "), m.cpus, c))
		}
	}
	return total, notes
}
