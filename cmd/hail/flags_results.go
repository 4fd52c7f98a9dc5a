package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/report"
	"github.com/hail-loadgen/hail/internal/run"
)

// resultFlags are the results toolkit's flags, shared by the load command
// and hail run.
type resultFlags struct {
	dbURL       string
	metricsAddr string
	targetPIDs  []int    // --target-pid, repeatable
	targetCmds  []string // --target-cmd
	cgroups     []string // --target-cgroup
	shard       string
	startAt     string
	barrier     bool // --start-at barrier
}

// loadFormats are the --output-format values of the load command and hail run.
var loadFormats = []string{"text", "json", "csv", "csv-seconds", "markdown", "html", "quiet"}

const loadFormatHelp = "text, json (oha's keys + hail), csv (one row per request, as oha), csv-seconds (one row per second), markdown, html (a page with charts) or quiet"

func addResultFlags(fl *pflag.FlagSet, r *resultFlags) {
	fl.StringVar(&r.dbURL, "db-url", "", "write every request (URL, times, latency, status, bytes, error, step, connection) to this SQLite `FILE`")
	fl.StringVar(&r.metricsAddr, "metrics-addr", "", "serve live Prometheus/OpenMetrics metrics at http://`ADDR`/metrics during the run, e.g. 127.0.0.1:9090 (port 0: a free port, said on stderr)")
	fl.Var(intsValue{&r.targetPIDs, "process id"}, "target-pid", "sample this local process and its descendants (RSS, PSS, CPU) every second into the report (repeatable)")
	fl.StringArrayVar(&r.targetCmds, "target-cmd", nil, "sample every process of this `NAME` and their descendants, looked for again every second (workers come and go; repeatable)")
	fl.StringArrayVar(&r.cgroups, "target-cgroup", nil, "sample the processes of this cgroup `PATH` (v1 or v2: /sys/fs/cgroup/…, or /system.slice/app.service) and its CPU and memory counters (repeatable)")
	fl.StringVar(&r.shard, "shard", "", "be shard `I/N` of a distributed run (I from 0, e.g. --shard $JOB_COMPLETION_INDEX/4): do 1/N of -n, -q, -c and stages")
	fl.StringVar(&r.startAt, "start-at", "", "start at this wall-clock `TIME` (RFC 3339, or Unix seconds), so every shard starts together; barrier: when a coordinator (hail kube) says, once every shard is ready")
	setGroup(fl, groupResults, "db-url", "metrics-addr", "target-pid", "target-cmd", "target-cgroup", "shard", "start-at")
}

// parseShard parses --shard I/N (I from 0).
func parseShard(s string) (int, int, error) {
	is, ns, ok := strings.Cut(strings.TrimSpace(s), "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(is))
	n, err2 := strconv.Atoi(strings.TrimSpace(ns))
	switch {
	case !ok || err1 != nil || err2 != nil:
		return 0, 0, fmt.Errorf("--shard %q: write it as I/N, e.g. --shard 0/4 (I counts from 0, as Kubernetes' JOB_COMPLETION_INDEX)", s)
	case n < 1 || n > 100_000:
		return 0, 0, fmt.Errorf("--shard %q: N must be from 1 to 100000", s)
	case i < 0 || i >= n:
		return 0, 0, fmt.Errorf("--shard %q: I counts from 0 and must be below N (0 to %d)", s, n-1)
	}
	return i, n, nil
}

// barrierStart is the --start-at value that makes a shard wait at the start
// barrier (internal/barrier) for a coordinator to publish its start time.
const barrierStart = "barrier"

// parseStartAt parses --start-at: RFC 3339 or Unix seconds (fractions allowed).
func parseStartAt(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && f > 0 && f < 1e11 {
		sec, frac := int64(f), f-float64(int64(f))
		return time.Unix(sec, int64(frac*1e9)), nil
	}
	return time.Time{}, fmt.Errorf("--start-at %q: give an RFC 3339 time (2026-01-02T15:04:05Z) or Unix seconds ($(date -d '+30 sec' +%%s))", s)
}

// applyResultFlags puts --shard and --start-at into the plan and checks
// --target-pid.
func applyResultFlags(r *resultFlags, p *plan.Plan) error {
	if r.shard != "" {
		i, n, err := parseShard(r.shard)
		if err != nil {
			return err
		}
		if p.Requests > 0 && p.Duration == 0 && p.Requests < uint64(n) {
			return fmt.Errorf("--shard %s: -n %d is fewer requests than shards; give -n of at least %d", r.shard, p.Requests, n)
		}
		p.ShardIndex, p.ShardCount = i, n
	}
	if r.startAt == barrierStart {
		if r.shard == "" || r.metricsAddr == "" {
			return fmt.Errorf("--start-at barrier: give --shard I/N and --metrics-addr too: the barrier is served beside the metrics (hail kube sets all three)")
		}
		r.barrier = true
	} else if r.startAt != "" {
		t, err := parseStartAt(r.startAt)
		if err != nil {
			return err
		}
		now := time.Now()
		if err := run.CheckStartAt(t, now, p.ShardCount > 1); err != nil {
			return err
		}
		if late := now.Sub(t); late > report.LateStart && p.ShardCount > 1 {
			fmt.Fprintf(os.Stderr, "hail: warning: --start-at %s passed %s ago: shard %d/%d starts now, late; its result records by how much, and hail merge marks the run incomplete\n",
				t.UTC().Format(time.RFC3339), late.Round(time.Millisecond), p.ShardIndex, p.ShardCount)
		}
		p.StartAt = t
	}
	for _, pid := range r.targetPIDs {
		if pid <= 0 {
			return fmt.Errorf("--target-pid %d: give the process id of the target", pid)
		}
	}
	return nil
}
