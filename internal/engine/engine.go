// Package engine defines what an engine is given to run a load test, and the
// pieces every engine shares: the classification of failures into named
// error kinds and the abort protocol. Engines live in subpackages.
package engine

import (
	"net/url"
	"sync/atomic"
	"time"

	"github.com/hail-loadgen/hail/internal/http1"
	"github.com/hail-loadgen/hail/internal/schedule"
	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/internal/stream"
	"github.com/hail-loadgen/hail/internal/transport"
)

// Engine runs a Job to completion.
type Engine interface {
	// Name is the engine's name as reports show it ("net", "uring").
	Name() string
	// Run sends the job's requests and records every outcome into the job's
	// recorders. It returns when every worker has stopped: the source is
	// exhausted (or stopped) and every in-flight request has ended or been
	// aborted. An error means the engine could not run at all.
	Run(j *Job) error
}

// Job is everything an engine needs for one run. Engines must not modify it.
type Job struct {
	// Start is the run's time zero: intended send times are offsets from it.
	Start time.Time
	// Source hands out requests (and their intended times in the open model).
	Source *schedule.Source
	// Steps name the kinds of request of the run (one, "", for a plain
	// URL; a scenario's steps otherwise).
	Steps []string
	// Recorders receive the measurements: Recorders[step] are the step's
	// recorders, all of the same length; worker w records into
	// Recorders[step][w % len]. With Stages, there is a group per step
	// and stage slot: Recorders[slot*len(Steps)+step] (Group).
	Recorders [][]*stats.Recorder
	// Stages, if set, gives each stage of a ramp (and each stage's warmup)
	// recorders of its own: a request records into its step's group of the
	// slot of its intended time. Nil: one group per step.
	Stages *schedule.StageClock
	// Connections is the number of concurrent connections (-c).
	Connections int
	// NewRequests returns the request builder of one worker.
	NewRequests func(worker int) Requests
	// PerConnection asks engines that multiplex connections in a worker to
	// call NewRequests once per connection (numbered across the run), for
	// builders that keep per-virtual-user state such as a scenario's flows.
	PerConnection bool
	// URL is the target URL: redirects are resolved against it and a hop
	// that leaves its origin goes over RedirectDialer's connections.
	URL *url.URL
	// BodyLimit is how many body bytes of each response the parser keeps
	// for Requests.Done (captures); 0 keeps none.
	BodyLimit int
	// CaptureHeaders are header names (lower case) whose values the parser
	// keeps for Requests.Done (http1.Parser.WantHeaders).
	CaptureHeaders []string
	// Dialer opens connections to the target.
	Dialer *transport.Dialer
	// Pacing is the shortest time between two of the open model's wake-ups
	// to send (plan.Plan.PacingGranularity, resolved); 0 wakes for each
	// request.
	Pacing time.Duration
	// Timeout bounds each request from send to last byte; 0 means none.
	Timeout time.Duration
	// KeepAlive reuses connections; when false each request gets a new one.
	KeepAlive bool
	// MaxRedirects is how many redirects to follow (0: none; 3xx are results).
	MaxRedirects int
	// RedirectDialer opens a connection to another origin met in a redirect.
	RedirectDialer func(u *url.URL) (*transport.Dialer, error)
	// MaxHeaderBytes caps a response's header block.
	MaxHeaderBytes int
	// Stream says how streaming responses (server-sent events) are
	// measured; nil: they are not (AttachMeter).
	Stream *stream.Config

	// Stop is closed when no new request may start.
	Stop <-chan struct{}
	// Abort is closed when in-flight requests must end now; they are
	// recorded as ErrAborted.
	Abort <-chan struct{}

	// Messages counts the run's gRPC calls and their messages; engines
	// that make gRPC calls add each worker's counts as it ends.
	Messages Messages

	aborting atomic.Bool
}

// Messages counts gRPC calls (those that were sent) and the messages they
// carried: a call is one request, whatever its streaming kind, counted
// once however many attempts it took. Retries are the attempts that sent
// a call again on a new connection (a stale connection, a GOAWAY); they
// are also among the run's reconnects.
type Messages struct {
	Calls, Retries, Sent, Received atomic.Int64
}

// MarkAborting records that the run is aborting; call it before closing Abort.
func (j *Job) MarkAborting() { j.aborting.Store(true) }

// Aborting reports whether in-flight requests are being aborted, so that
// failures caused by the abort are recorded as ErrAborted.
func (j *Job) Aborting() bool { return j.aborting.Load() }

// Group is the recorder group of a request of step intended at at (the
// time it was claimed, in the closed model): the step's own, or with
// Stages the step's in the slot of at. It neither locks nor allocates.
func (j *Job) Group(step int, at time.Duration) int {
	if j.Stages == nil {
		return step
	}
	return j.Stages.Slot(at)*len(j.Steps) + step
}

// Since returns the time since the job's start.
func (j *Job) Since() time.Duration { return time.Since(j.Start) }

// InitParser sets up p, a response parser an engine keeps for the job's
// requests: the body bytes it keeps, whether it captures headers, the
// largest response head it accepts and whether it keeps Location (only
// when redirects are followed).
func (j *Job) InitParser(p *http1.Parser) {
	p.BodyLimit = j.BodyLimit
	p.WantHeaders = j.CaptureHeaders
	p.MaxHeaderBytes = j.MaxHeaderBytes
	p.WantLocation = j.MaxRedirects > 0
}

// Kind is the error kind a request that failed with err ends as: ErrAborted
// while the run is aborting (the abort is what ended it), else Classify's
// kind. mid tells whether part of a response had arrived.
func (j *Job) Kind(err error, mid bool) stats.ErrorKind {
	if j.Aborting() {
		return stats.ErrAborted
	}
	return Classify(err, mid)
}
