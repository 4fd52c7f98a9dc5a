package scenario

import (
	"time"

	"github.com/hail-loadgen/hail/internal/random"
)

// thinkTime is a virtual user's pause after a request before its next one
// (closed model): fixed (lo == hi) or uniform in [lo, hi]. A step's own
// think time wins over its flow's, and a flow's over the file's.
type thinkTime struct {
	lo, hi time.Duration
	set    bool
}

// draw returns one pause.
func (t thinkTime) draw(r *random.Rand) time.Duration {
	if t.hi <= t.lo {
		return t.lo
	}
	return t.lo + time.Duration(r.Uint64n(uint64(t.hi-t.lo)+1))
}

// String is the think time as the file writes it: 100ms or 50ms..150ms.
func (t thinkTime) String() string {
	if t.hi <= t.lo {
		return t.lo.String()
	}
	return t.lo.String() + ".." + t.hi.String()
}

// think is the pause after a request of step st: the step's think time,
// else that of the flow the request belonged to (flows keep a builder per
// virtual user, so flow is this request's), else the file's.
func (v *vu) think(st *Step) time.Duration {
	t := st.think
	if !t.set {
		t = v.flowThink
	}
	if !t.set {
		t = v.s.think
	}
	if !t.set {
		return 0
	}
	return t.draw(v.rng)
}
