package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/hail-loadgen/hail/internal/report"
	"github.com/hail-loadgen/hail/result"
)

// shardResult is what collecting got of one shard.
type shardResult struct {
	res  *result.Result
	why  string // how it ended when not plainly complete
	exit int32
}

// collect gathers every shard's result — from the logs (followed while it
// ran, or read now), or from the results volume — names how each shard
// that did not complete ended, merges what there is, writes it all in the
// run's directory and prints the report, then deletes the run's objects
// (unless Keep). The status: 0 complete, 2 incomplete or a threshold
// failed, 3 no request succeeded, 1 nothing to merge.
func (r *Runner) collect(ctx context.Context, s *Spec, v view, stopped bool) (int, error) {
	dir, err := r.runDir(s)
	if err != nil {
		return 1, err
	}
	pio := r.podIO(s.Namespace)
	var onVolume map[int][]byte
	if s.Claim != "" {
		wrote := false
		for _, st := range v.shards {
			wrote = wrote || (st.started && wroteResult(st.exit, []byte(st.message)))
		}
		if wrote {
			if onVolume, err = r.fetchResults(ctx, s); err != nil {
				r.say("could not read the results volume: %v", err)
			}
		}
	}
	got := make([]shardResult, s.Shards)
	for i, st := range v.shards {
		logPath := filepath.Join(dir, fmt.Sprintf("shard-%d.log", i))
		log, _ := os.ReadFile(logPath)
		if st.pod != "" && !st.gone && st.started {
			if full := readLog(ctx, pio, st.pod); len(full) > len(log) {
				log = full
				_ = os.WriteFile(logPath, log, 0o644)
			}
		}
		g := &got[i]
		g.exit = st.exit
		var raw []byte
		var perr error
		if s.Claim != "" {
			raw = onVolume[i]
			if raw != nil {
				g.res, perr = result.ReadJSON(bytes.NewReader(raw))
			}
		} else if st.started {
			g.res, perr = resultFromLog(log)
		}
		g.why = st.ending(s, log, stopped, g.res != nil)
		if g.res == nil && g.why == "" {
			g.why = "it ended well but no result was found"
			if perr != nil {
				g.why = fmt.Sprintf("it ended well but %v", perr)
			}
		}
		if g.res != nil {
			var b bytes.Buffer
			_ = result.WriteJSON(&b, g.res)
			_ = os.WriteFile(filepath.Join(dir, fmt.Sprintf("shard-%d.json", i)), b.Bytes(), 0o644)
		}
	}
	code, err := r.merge(s, dir, got)
	if !r.Keep {
		r.cleanup(ctx, s)
	}
	return code, err
}

// readLog reads a pod's whole log now (nil when it cannot).
func readLog(ctx context.Context, pio podIO, pod string) []byte {
	rc, err := pio.Logs(ctx, pod, container, false)
	if err != nil {
		return nil
	}
	defer rc.Close()
	b, _ := io.ReadAll(io.LimitReader(rc, 256<<20))
	return b
}

// fetchResults reads the shards' results from the volume through a
// helper pod: shard index → the file's bytes.
func (r *Runner) fetchResults(ctx context.Context, s *Spec) (map[int][]byte, error) {
	name := s.Name + "-fetch"
	tok, err := r.helperPod(ctx, s, name)
	if err != nil {
		return nil, err
	}
	defer r.endHelper(ctx, s, name, tok)
	pio := r.podIO(s.Namespace)
	b, err := proxyBody(ctx, pio, "GET", name, filesPort, "/list", nil, tokenHeaders(tok), nil)
	if err != nil {
		return nil, err
	}
	var names []string
	if err := json.Unmarshal(b, &names); err != nil {
		return nil, fmt.Errorf("the helper's list: %v", err)
	}
	out := map[int][]byte{}
	for i := range s.Shards {
		want := strings.TrimPrefix(s.resultPath(i), resultsDir+"/")
		for _, n := range names {
			if n != want {
				continue
			}
			data, err := proxyBody(ctx, pio, "GET", name, filesPort, "/files/"+n, nil, tokenHeaders(tok), nil)
			if err != nil {
				return out, err
			}
			out[i] = data
		}
	}
	return out, nil
}

// merge merges what was collected, writes total.json and report.html,
// prints the text report and a line per shard, and returns the status.
func (r *Runner) merge(s *Spec, dir string, got []shardResult) (int, error) {
	var results []*result.Result
	var names []string
	failed := map[int]string{}
	for i, g := range got {
		if g.res != nil {
			results = append(results, g.res)
			names = append(names, fmt.Sprintf("shard-%d.json", i))
		}
		if g.why != "" && s.Shards > 1 {
			failed[i] = g.why
		}
	}
	if len(results) == 0 {
		for i, g := range got {
			r.say("shard %d/%d: no result: %s", i, s.Shards, g.why)
		}
		return 1, fmt.Errorf("%w (the lines above say why each shard failed)", errNothing)
	}
	merged, err := report.MergeWith(results, names, report.MergeOptions{Failed: failed, Partial: true})
	if err != nil {
		return 1, fmt.Errorf("merging the shards: %v", err)
	}
	var js, html bytes.Buffer
	if err := result.WriteJSON(&js, merged); err != nil {
		return 1, err
	}
	_ = report.WriteHTML(&html, merged)
	total, page := filepath.Join(dir, "total.json"), filepath.Join(dir, "report.html")
	if err := os.WriteFile(total, js.Bytes(), 0o644); err != nil {
		return 1, err
	}
	if err := os.WriteFile(page, html.Bytes(), 0o644); err != nil {
		return 1, err
	}
	if err := report.WriteText(r.Stdout, merged, report.TextOptions{}); err != nil {
		return 1, err
	}
	code := 0
	if m := merged.Hail.Merged; m != nil && len(m.PerShard) > 0 {
		for _, o := range m.PerShard {
			r.say("%s", report.OutcomeLine(o, s.Shards))
		}
	} else if s.Shards == 1 && got[0].why != "" {
		r.say("shard 0/1: %s", got[0].why)
		code = 2
	}
	var thresholds, none []string
	results = results[:0]
	for i, g := range got {
		if g.res == nil {
			continue
		}
		results = append(results, g.res)
		switch g.exit {
		case exitThresholds:
			thresholds = append(thresholds, fmt.Sprint(i))
		case exitNoSuccess:
			none = append(none, fmt.Sprint(i))
		}
	}
	incomplete := merged.Hail.Merged != nil && len(merged.Hail.Merged.Incomplete) > 0
	switch {
	case len(none) > 0 && len(none) == len(results):
		r.say("no request succeeded on any shard (each exited %d): %s", exitNoSuccess, total)
		return exitNoSuccess, nil
	case len(none) > 0:
		r.say("no request succeeded on shard(s) %s (exit %d); the others' did", strings.Join(none, ", "), exitNoSuccess)
	}
	if len(thresholds) > 0 {
		r.say("scenario thresholds failed on shard(s) %s (each judged on its own share; its result says which)", strings.Join(thresholds, ", "))
		code = 2
	}
	if incomplete {
		r.say("the run is INCOMPLETE (the lines above say which shard and why); merged what there was: %s, %s", total, page)
		return 2, nil
	}
	r.say("merged result: %s; report: %s", total, page)
	return code, nil
}
