package engine

import (
	"errors"

	"github.com/hail-loadgen/hail/internal/http1"
	"github.com/hail-loadgen/hail/internal/stream"
)

// ErrStreamIdle is a streaming response that went longer than the run's
// idle timeout (stream.Config.Idle) without an event.
var ErrStreamIdle = errors.New("stream idle timeout: no event within --idle-timeout")

// AttachMeter gives the request slot whose call is c (and, for HTTP/1
// engines, whose response parser is p) a stream meter, when the job
// measures streams. Engines call it once per slot.
func (j *Job) AttachMeter(c *Call, p *http1.Parser) {
	if j.Stream == nil {
		return
	}
	m := stream.NewMeter(j.Stream)
	c.UseMeter(m)
	if p != nil {
		p.Sink = m
	}
}
