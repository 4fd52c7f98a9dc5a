package result

import "time"

// Second is one second of a run's (or a step's) per-second series.
type Second struct {
	// Index is the second of the run this entry covers, from 0; Span how
	// much of it the entry covers (a second, or less for the last one; a
	// whole number of nanoseconds).
	Index int           `json:"t"`
	Span  time.Duration `json:"span" unit:"s"`
	// Requests are the sent requests that ended in this second (responses
	// + errors + truncated streams), Errors of them failed (those the
	// run's end aborted included). NotSent are requests that failed in
	// this second before a byte was written (connect failures): errors,
	// but never sent.
	Requests int64 `json:"requests"`
	Errors   int64 `json:"errors"`
	NotSent  int64 `json:"not_sent,omitempty"`
	// CutOff are the sent requests the run's end cut off: those it
	// aborted (among the Errors) and Truncated streams (not errors: hail
	// llm's and --sse's streams still running after the drain).
	CutOff    int64 `json:"cut_off,omitempty"`
	Truncated int64 `json:"truncated,omitempty"`
	// Drained of the Requests ended in the drain (-w, Plan.WaitOngoing),
	// after the run stopped sending (the drain begins summary.total −
	// hail.drain.seconds into the run).
	Drained int64 `json:"drained,omitempty"`
	// BodyBytes are response body bytes received, WireBytes every byte
	// read, SentBytes every byte written.
	BodyBytes int64 `json:"body_bytes"`
	WireBytes int64 `json:"wire_bytes"`
	SentBytes int64 `json:"sent_bytes"`
	// P50 to Max are the latencies of this second's responses.
	P50  time.Duration `json:"p50_ns"`
	P90  time.Duration `json:"p90_ns"`
	P99  time.Duration `json:"p99_ns"`
	P999 time.Duration `json:"p999_ns"`
	Max  time.Duration `json:"max_ns"`
	// AllSentP50, AllSentP99 and AllSentMax are over every sent request
	// that ended in this second, failures at their elapsed time (cut-off
	// requests excluded).
	AllSentP50 time.Duration `json:"all_sent_p50_ns"`
	AllSentP99 time.Duration `json:"all_sent_p99_ns"`
	AllSentMax time.Duration `json:"all_sent_max_ns"`
	// LagP99 is the p99 of hail's own lateness in this second (open
	// model: its send lateness; closed: from a response's arrival to the
	// next send on its connection); WaitP99 of the time requests waited
	// for a free connection (open model): the target's backpressure.
	LagP99  time.Duration `json:"lag_p99_ns"`
	WaitP99 time.Duration `json:"wait_p99_ns,omitempty"`
	// Events are the server-sent events streams delivered in this second;
	// Tokens the output tokens (hail llm) by their arrival, corrected when
	// each stream ended (a failed or cut stream's are taken back).
	Events int64 `json:"events,omitempty"`
	Tokens int64 `json:"tokens,omitempty"`
	// InFlight and ConnsOpen are sampled at the end of the second.
	InFlight  int64 `json:"in_flight"`
	ConnsOpen int64 `json:"conns_open"`
	// CPU is hail's CPU use in this second, in cores (1.0 = one core
	// busy); Others the share of hail's CPUs that other processes used
	// (Linux; 0 where unknown).
	CPU    float64 `json:"cpu"`
	Others float64 `json:"others_cpu,omitempty"`
	// TargetRSS and TargetCPU are the monitored target's resident memory
	// (bytes, summed over its processes) and CPU use (cores) in this
	// second (--target-pid, --target-cmd, --target-cgroup); TargetPSS its
	// proportional set size (bytes: shared pages divided among their
	// sharers), TargetProcs its processes and TargetShare the share of
	// hail's CPUs its processes used (not in Others).
	TargetRSS   int64   `json:"target_rss_bytes,omitempty"`
	TargetCPU   float64 `json:"target_cpu,omitempty"`
	TargetPSS   int64   `json:"target_pss_bytes,omitempty"`
	TargetProcs int     `json:"target_processes,omitempty"`
	TargetShare float64 `json:"target_on_hail_cpus,omitempty"`
}
