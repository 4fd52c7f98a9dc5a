package main

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/hail-loadgen/hail/internal/plan"
)

// groupStream is the help group of the streaming flags.
const groupStream = "Streams (server-sent events)"

// streamFlags say how streaming responses are read: the load command's
// --sse, and --idle-timeout and --stream-drain (hail llm's too).
type streamFlags struct {
	sse   bool
	idle  time.Duration
	drain time.Duration
}

// addStreamFlags declares the stream flags; withSSE adds --sse (hail llm's
// responses are streams anyway).
func addStreamFlags(fl *pflag.FlagSet, f *streamFlags, withSSE bool) {
	f.idle, f.drain = plan.DefaultIdleTimeout, plan.DefaultStreamDrain
	names := []string{"idle-timeout", "stream-drain"}
	if withSSE {
		fl.BoolVar(&f.sse, "sse", false, "read every 2xx response as server-sent events (text/event-stream responses are read so anyway): "+
			"time to first event, gaps, stalls, hail's read lag")
		names = append([]string{"sse"}, names...)
	}
	fl.Var(zeroDurationValue{&f.idle}, "idle-timeout", "fail a stream that goes this long without an event (from its response head); 0: never")
	fl.Var(zeroDurationValue{&f.drain}, "stream-drain",
		"at the end of -z let streams in progress go on this long, then cut them and count them as truncated, not errors; 0: cut at once")
	setGroup(fl, groupStream, names...)
}

// apply puts the stream settings into p.
func (f *streamFlags) apply(p *plan.Plan) {
	p.SSE = p.SSE || f.sse
	p.IdleTimeout, p.StreamDrain = negZero(f.idle), negZero(f.drain)
}

// negZero turns a flag's 0 ("none") into the plan's "none" (negative; the
// plan's 0 is its default).
func negZero(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}
