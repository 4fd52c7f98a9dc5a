package sweep

import (
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// Pass is the share of a step's requests that must meet every objective.
const Pass = 0.99

// Step is one measured step of a sweep.
type Step struct {
	// Kind is "closed" (the ceiling), "step" (the fixed steps) or
	// "bisect".
	Kind string `json:"kind"`
	// Rate is the open model's rate asked, requests/s (0: closed).
	Rate float64 `json:"rate"`
	// Requests are those meant to be sent in the window; Completed those
	// of them that streamed to their end; Met those that met every
	// objective.
	Requests  int `json:"requests"`
	Completed int `json:"completed"`
	Met       int `json:"met"`
	// Throughput, Goodput and TokensPerSec are per second of the window:
	// completed requests, requests that met every objective, and the
	// completed requests' output tokens.
	Throughput   float64 `json:"throughput"`
	Goodput      float64 `json:"goodput"`
	TokensPerSec float64 `json:"output_tokens_per_sec"`
	// TTFT (from the intended send) and TPOT, median and 99th percentile.
	TTFT50 time.Duration `json:"ttft_p50_ns"`
	TTFT99 time.Duration `json:"ttft_p99_ns"`
	TPOT50 time.Duration `json:"tpot_p50_ns"`
	TPOT99 time.Duration `json:"tpot_p99_ns"`
}

// Passed is whether at least Pass of the step's requests met every
// objective.
func (s Step) Passed() bool { return s.Requests > 0 && float64(s.Met) >= Pass*float64(s.Requests) }

// Config shapes a search.
type Config struct {
	// Steps is how many open-model rates the fixed steps try: the
	// ceiling's 1/Steps, 2/Steps, … 1.
	Steps int
	// Precision ends the bisection when the rates that pass and fail are
	// within this fraction of each other (0.02: 2%).
	Precision float64
	// MaxBisect bounds the bisection's steps.
	MaxBisect int
}

// Result is a sweep's steps and its answer.
type Result struct {
	Steps []Step `json:"steps"`
	// Ceiling is the closed run's throughput (requests/s).
	Ceiling float64 `json:"ceiling"`
	// Answer is the highest rate that passed (0: none did); Failed the
	// lowest that failed above it (0: none did).
	Answer float64 `json:"answer"`
	Failed float64 `json:"failed,omitempty"`
	// Interrupted says the sweep was stopped before its end.
	Interrupted bool `json:"interrupted,omitempty"`
}

// ErrStopped, returned by a measure function, ends the search with the
// steps measured so far (an interrupt).
var ErrStopped = errors.New("sweep stopped")

// Search runs the sweep: measure(0) runs the closed model, measure(r) the
// open model at r requests/s. Its error is measure's, with the steps
// measured before it in the Result.
func Search(c Config, measure func(rate float64) (Step, error)) (Result, error) {
	var res Result
	run := func(kind string, rate float64) (Step, error) {
		s, err := measure(rate)
		if err != nil {
			return s, err
		}
		s.Kind, s.Rate = kind, rate
		res.Steps = append(res.Steps, s)
		return s, nil
	}
	stopped := func(err error) (Result, error) {
		if errors.Is(err, ErrStopped) {
			res.Interrupted = true
			return res, nil
		}
		return res, err
	}
	ceiling, err := run("closed", 0)
	if err != nil {
		return stopped(err)
	}
	res.Ceiling = ceiling.Throughput
	if res.Ceiling <= 0 {
		return res, fmt.Errorf("the closed run completed no request in its window: no ceiling to sweep below")
	}
	lo, hi := 0.0, 0.0
	for k := 1; k <= c.Steps; k++ {
		r := res.Ceiling * float64(k) / float64(c.Steps)
		s, err := run("step", r)
		if err != nil {
			return stopped(err)
		}
		if !s.Passed() {
			hi = r
			break
		}
		lo = r
	}
	// Past the ceiling (an open model may beat a closed one whose
	// connections wait for their responses): grow until a rate fails.
	for r, n := lo*1.25, 0; hi == 0 && n < 4; r, n = r*1.25, n+1 {
		s, err := run("step", r)
		if err != nil {
			return stopped(err)
		}
		if s.Passed() {
			lo = r
		} else {
			hi = r
		}
	}
	for n := 0; hi > 0 && n < c.MaxBisect && hi-lo > c.Precision*hi; n++ {
		mid := (lo + hi) / 2
		s, err := run("bisect", mid)
		if err != nil {
			return stopped(err)
		}
		if s.Passed() {
			lo = mid
		} else {
			hi = mid
		}
	}
	res.Answer, res.Failed = lo, hi
	return res, nil
}

// WriteText writes the steps as a table and the answer.
func (r Result) WriteText(w io.Writer, slo string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "step\trate/s\tTTFT p50\tTTFT p99\tTPOT p50\tTPOT p99\tmet SLO\tgoodput/s\tthroughput/s\ttokens/s\t\n")
	for _, s := range r.Steps {
		rate := fmt.Sprintf("%.2f", s.Rate)
		if s.Kind == "closed" {
			rate = "closed"
		}
		met := "-"
		if s.Requests > 0 {
			met = fmt.Sprintf("%.1f%%", 100*float64(s.Met)/float64(s.Requests))
		}
		verdict := ""
		if s.Kind != "closed" {
			verdict = map[bool]string{true: " pass", false: " FAIL"}[s.Passed()]
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s%s\t%.2f\t%.2f\t%.1f\t\n", s.Kind, rate, ms(s.TTFT50), ms(s.TTFT99), ms(s.TPOT50), ms(s.TPOT99),
			met, verdict, s.Goodput, s.Throughput, s.TokensPerSec)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var err error
	switch {
	case r.Interrupted:
		_, err = fmt.Fprintf(w, "\nInterrupted: the highest rate that passed so far is %.2f requests/s.\n", r.Answer)
	case r.Answer == 0:
		_, err = fmt.Fprintf(w, "\nNo rate met %s for %.0f%% of its requests (the lowest tried: %.2f requests/s).\n", slo, Pass*100, r.Failed)
	case r.Failed == 0:
		_, err = fmt.Fprintf(w, "\nEvery rate tried met %s for ≥ %.0f%% of requests, up to %.2f requests/s (closed-model ceiling %.2f).\n",
			slo, Pass*100, r.Answer, r.Ceiling)
	default:
		_, err = fmt.Fprintf(w, "\nHighest rate meeting %s for ≥ %.0f%% of requests: %.2f requests/s (%.2f failed; closed-model ceiling %.2f).\n",
			slo, Pass*100, r.Answer, r.Failed, r.Ceiling)
	}
	return err
}

// ms writes a duration in milliseconds.
func ms(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1fms", float64(d)/1e6)
}
