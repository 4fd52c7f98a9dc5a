package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/report"
	"github.com/hail-loadgen/hail/internal/run"
	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/internal/sweep"
)

// sweepFlags are hail llm --sweep's settings.
type sweepFlags struct {
	on        bool
	steps     int
	duration  time.Duration
	warmup    time.Duration
	precision float64
}

// sweepDrain is how long a step's streams may run on after its end when
// --stream-drain is not given: a step's slow requests are its measure.
const sweepDrain = 60 * time.Second

// checkSweep checks --sweep against the other flags; each problem is one
// line.
func checkSweep(cmd *cobra.Command, f *llmFlags) error {
	s := &f.sweep
	changed := cmd.Flags().Changed
	switch {
	case !s.on:
		for _, name := range []string{"sweep-steps", "sweep-step-duration", "sweep-warmup", "sweep-precision"} {
			if changed(name) {
				return fmt.Errorf("--%s shapes --sweep: add --sweep, or drop it", name)
			}
		}
		return nil
	case f.multiTurn:
		return fmt.Errorf("--sweep sends open-model rates; --multi-turn users are the closed model: drop one")
	case f.slo == "":
		return fmt.Errorf("--sweep finds the highest rate meeting objectives: give them with --slo, e.g. --slo ttft=500ms,tpot=50ms")
	case changed("query-per-second") || changed("n-requests") || changed("duration") || changed("burst-delay") || changed("stages"):
		return fmt.Errorf("--sweep chooses each step's rate and length: drop -q, -n, -z, --burst-delay and --stages (the steps last --sweep-step-duration)")
	case s.steps < 1 || s.steps > 100:
		return fmt.Errorf("--sweep-steps %d: from 1 to 100", s.steps)
	case s.duration <= 0 || s.warmup < 0 || s.warmup >= s.duration:
		return fmt.Errorf("--sweep-warmup %v and --sweep-step-duration %v: a step lasts more than its warm-up, which is not negative", s.warmup, s.duration)
	case s.precision <= 0 || s.precision >= 1:
		return fmt.Errorf("--sweep-precision %g: a fraction above 0 and below 1 (0.02: the bisection stops within 2%%)", s.precision)
	}
	return nil
}

// runSweep runs the sweep: each step a run of l's load, measured from its
// requests' records; the table and the answer are the report.
func runSweep(cmd *cobra.Command, f *llmFlags, l *llmRun) error {
	if l.Spec.Data != nil && l.Arrivals == "trace" {
		return fmt.Errorf("--sweep chooses each step's rate, and --dataset %s sets its own arrival times: drop one", l.Spec.Data.Spec)
	}
	out, err := openOutput(f.output, cmd.OutOrStdout())
	if err != nil {
		return err
	}
	defer out.Discard()
	interrupt, _, release := handleSignals(out)
	defer release()
	s := f.sweep
	measure := func(rate float64) (sweep.Step, error) {
		p := *l.plan
		p.Duration, p.Requests = s.duration, 0
		if p.StreamDrain == 0 {
			p.StreamDrain = sweepDrain
		}
		if err := l.SetRate(&p, rate); err != nil {
			return sweep.Step{}, err
		}
		w := &sweep.Window{From: s.warmup, To: s.duration, SLO: l.SLO, Expect: l.Spec.Expect}
		step, err := measureStep(&p, l, w, interrupt, rate)
		if err != nil {
			return step, err
		}
		select {
		case <-interrupt:
			return step, sweep.ErrStopped
		default:
		}
		progressLine(rate, step)
		return step, nil
	}
	res, err := sweep.Search(sweep.Config{Steps: s.steps, Precision: s.precision, MaxBisect: 12}, measure)
	if err != nil && len(res.Steps) == 0 {
		return err
	}
	doc := sweepDoc{Sweep: res, SLO: l.SLO.String(), Config: l.config(), Version: plan.Version}
	if werr := writeSweep(out, f.format, &doc); werr != nil {
		return werr
	}
	if cerr := out.Commit(); cerr != nil {
		return cerr
	}
	return err
}

// sweepDoc is a sweep's JSON file, as hail llm --sweep -j writes it and
// hail report reads it back.
type sweepDoc struct {
	Sweep sweep.Result `json:"sweep"`
	// SLO is the objectives the steps were judged by (--slo).
	SLO string `json:"slo"`
	// Config is the run's configuration, as a Result's (its url among it).
	Config map[string]any `json:"config"`
	// Version is the hail that ran the sweep.
	Version string `json:"version,omitempty"`
}

// sweepFormats are the formats a sweep is written in.
var sweepFormats = []string{"text", "json", "html"}

// writeSweep writes d in format: json (the file itself), html (the goodput
// and TTFT curves and the table) or text (the table and the answer).
func writeSweep(w io.Writer, format string, d *sweepDoc) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(d)
	case "html":
		var table strings.Builder
		if err := d.Sweep.WriteText(&table, d.SLO); err != nil {
			return err
		}
		var steps []report.SweepStep
		for _, st := range d.Sweep.Steps {
			if st.Kind != "closed" {
				steps = append(steps, report.SweepStep{Rate: st.Rate, Passed: st.Passed(), TTFT99: st.TTFT99.Seconds(), Goodput: st.Goodput, Throughput: st.Throughput})
			}
		}
		url, _ := d.Config["url"].(string)
		version := cmp.Or(d.Version, plan.Version)
		return report.WriteSweepHTML(w, version, url, d.SLO, steps, d.Sweep.Answer, d.Sweep.Ceiling, table.String())
	}
	return d.Sweep.WriteText(w, d.SLO)
}

// readSweep reads b as a sweep's file: ok is false when b is not one (no
// "sweep" object at its top).
func readSweep(b []byte) (d *sweepDoc, ok bool, err error) {
	var probe struct {
		Sweep json.RawMessage `json:"sweep"`
	}
	if json.Unmarshal(b, &probe) != nil || len(probe.Sweep) == 0 || probe.Sweep[0] != '{' {
		return nil, false, nil
	}
	d = &sweepDoc{}
	if err := json.Unmarshal(b, d); err != nil {
		return nil, true, fmt.Errorf("a hail llm --sweep result that does not read as one: %v", err)
	}
	return d, true, nil
}

// measureStep runs one step of the sweep and measures its window.
func measureStep(p *plan.Plan, l *llmRun, w *sweep.Window, interrupt <-chan struct{}, rate float64) (sweep.Step, error) {
	tr := stats.NewTracer(0)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for b := range tr.Batches() {
			for i := range b {
				w.Add(&b[i])
			}
			tr.Recycle(b)
		}
	}()
	_, err := run.Run(context.Background(), p, run.Options{Interrupt: interrupt, Workload: l.Workload, Tracer: tr, Config: l.config()})
	tr.Close()
	<-done
	kind := "step"
	if rate == 0 {
		kind = "closed"
	}
	return w.Step(kind, rate), err
}

// progressLine tells stderr about a step as it ends.
func progressLine(rate float64, s sweep.Step) {
	what := "closed model"
	if rate > 0 {
		what = fmt.Sprintf("%.2f requests/s", rate)
	}
	fmt.Fprintf(os.Stderr, "sweep: %s: %d requests, %.1f%% met the objectives, TTFT p99 %.1fms, %.2f completed/s\n",
		what, s.Requests, 100*float64(s.Met)/float64(max(s.Requests, 1)), float64(s.TTFT99)/1e6, s.Throughput)
}
