package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/hail-loadgen/hail/internal/plan"
)

// modelFlags say how much load and when: oha's -n, -c, -z, -w, -q,
// --burst-delay, --burst-rate and --latency-correction.
type modelFlags struct {
	n           uint64
	c           int
	z           time.Duration
	q           float64
	burstDelay  time.Duration
	burstRate   int
	wait        bool
	latencyCorr bool
	pacing      time.Duration
}

func addModelFlags(fl *pflag.FlagSet, f *modelFlags) {
	f.n, f.c = 200, 50
	fl.VarP(countValue{&f.n}, "n-requests", "n", "number of requests to send; k and m suffixes (10k, 2m)")
	fl.VarP(intValue{&f.c, "connections"}, "connections", "c", "number of concurrent connections")
	fl.VarP(durationValue{&f.z, zeroRun}, "duration", "z",
		"run for this long instead of -n requests: 10s, 3m, 1m30s, '1m 30s', 2min (a plain number is seconds)")
	fl.BoolVarP(&f.wait, "wait-ongoing-requests-after-deadline", "w", false,
		"at the end of -z or on Ctrl-C let in-flight requests finish (bounded by -t, else 30s) instead of aborting them")
	fl.VarP(rateValue{&f.q}, "query-per-second", "q",
		"open model: send this many requests per second in total, at fixed intended times (0: no limit)")
	fl.Var(durationValue{&f.burstDelay, zeroBurstDelay}, "burst-delay", "send --burst-rate requests at once every this long")
	fl.Var(intValue{&f.burstRate, "requests per burst"}, "burst-rate", "requests per burst with --burst-delay (default 1)")
	fl.BoolVar(&f.latencyCorr, "latency-correction", false,
		"accepted for oha: hail always counts open-model latency from each request's intended send time")
	addPacingFlag(fl, &f.pacing)
	setGroup(fl, groupLoad, "n-requests", "connections", "duration", "wait-ongoing-requests-after-deadline",
		"query-per-second", "burst-delay", "burst-rate", "latency-correction", "pacing-granularity")
}

// addPacingFlag defines --pacing-granularity (the open model's batching of
// wake-ups, plan.Plan.PacingGranularity) for the load, run and grpc commands.
func addPacingFlag(fl *pflag.FlagSet, d *time.Duration) {
	*d = plan.DefaultPacing
	fl.Var(zeroDurationValue{d}, "pacing-granularity",
		"open model: wake at most once per this long to send the requests due, each at most that late (own lateness); 0: wake for each")
}

// pacing is the plan's PacingGranularity for the flag's value (0: none).
func pacing(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// apply puts the load model into p. oha's conflicting flags are errors as
// in oha (-n with -z; -q with --burst-delay or --burst-rate; --burst-rate
// without --burst-delay), except -w without -z, which in hail also applies
// to Ctrl-C, and --burst-delay without --burst-rate, which sends one
// request per burst as oha's help says.
func (f *modelFlags) apply(cmd *cobra.Command, p *plan.Plan) error {
	changed := cmd.Flags().Changed
	p.Connections, p.Requests, p.Rate, p.WaitOngoing, p.PacingGranularity = f.c, f.n, f.q, f.wait, pacing(f.pacing)
	if changed("n-requests") && changed("duration") {
		return fmt.Errorf("-n and -z both say how long to run: give -n N requests or -z DURATION, not both")
	}
	if f.q > 0 && (changed("burst-delay") || changed("burst-rate")) {
		return fmt.Errorf("-q and --burst-delay/--burst-rate both set the request rate: give one of them")
	}
	if changed("burst-rate") && f.burstDelay == 0 {
		return fmt.Errorf("--burst-rate needs --burst-delay (how often a burst is sent)")
	}
	if f.z > 0 {
		p.Duration, p.Requests = f.z, 0
	}
	if f.burstDelay > 0 {
		p.BurstEvery, p.BurstSize = f.burstDelay, uint64(max(f.burstRate, 1))
	}
	return nil
}
