package run

import (
	"errors"
	"fmt"

	"github.com/hail-loadgen/hail/internal/engine"
	"github.com/hail-loadgen/hail/internal/engine/h2engine"
	"github.com/hail-loadgen/hail/internal/engine/h3engine"
	"github.com/hail-loadgen/hail/internal/engine/netengine"
	"github.com/hail-loadgen/hail/internal/engine/uringengine"
	"github.com/hail-loadgen/hail/internal/plan"
)

// uringAvailable reports whether the io_uring engine can run here (a
// variable so tests can pretend it cannot).
var uringAvailable = uringengine.Available

// Select picks the engine for p and says why, in words the report shows.
//
// "net" always runs the net engine. "uring" runs the io_uring engine, or
// fails with one line naming the cause and the fix when io_uring cannot be
// used here or the target needs something the engine does not speak (TLS).
// "auto" picks uring when it is available and the target is plain HTTP/1.x
// over TCP, a unix socket or a hybrid-vsock socket, and net otherwise (TLS,
// AF_VSOCK, proxies, every non-Linux system); HTTP/2 and HTTP/3 have their
// own engines.
func Select(p *plan.Plan) (engine.Engine, string, error) {
	// HTTP/2 and HTTP/3 run on their own engines; AF_VSOCK and proxies on
	// net (see selectTransport).
	if e, why, ok, err := selectTransport(p); ok {
		return e, why, err
	}
	tls := p.URL != nil && p.URL.Scheme == "https"
	switch p.Engine {
	case plan.EngineNet:
		if p.SQPoll {
			return nil, "", errors.New("--sqpoll is an option of the uring engine: drop it, or use --engine uring")
		}
		return netengine.Engine{}, "--engine net", nil
	case plan.EngineURing:
		if tls {
			return nil, "", errors.New("--engine uring: TLS targets need --engine net (the uring engine speaks plain HTTP/1.1)")
		}
		if err := uringAvailable(); err != nil {
			return nil, "", fmt.Errorf("--engine uring: %s; use --engine net", unavailableLine(err))
		}
		return &uringengine.Engine{SQPoll: p.SQPoll}, "--engine uring", nil
	}
	ignored := ""
	if p.SQPoll {
		ignored = " (--sqpoll ignored)"
	}
	if tls {
		return netengine.Engine{}, "auto: TLS target, using net" + ignored, nil
	}
	if err := uringAvailable(); err != nil {
		return netengine.Engine{}, "auto: io_uring unavailable (" + unavailableCause(err) + "), using net" + ignored, nil
	}
	return &uringengine.Engine{SQPoll: p.SQPoll}, "auto: io_uring available, plain HTTP/1.1 target", nil
}

// unavailableLine is the cause and the fix, for an error line.
func unavailableLine(err error) string {
	var ue *uringengine.UnavailableError
	if errors.As(err, &ue) {
		return ue.Cause + "; " + ue.Fix
	}
	return err.Error()
}

// unavailableCause is the cause alone, for the report's engine reason.
func unavailableCause(err error) string {
	var ue *uringengine.UnavailableError
	if errors.As(err, &ue) {
		return ue.Cause
	}
	return err.Error()
}

// selectTransport picks the engine for what the uring engine does not
// speak: HTTP/2 (the h2 engine), HTTP/3 (the h3 engine), and the AF_VSOCK
// and proxy transports, whose connections only transport.Dialer opens (the
// net engine). The hybrid-vsock unix socket is the uring engine's too. ok is
// false for everything else.
func selectTransport(p *plan.Plan) (e engine.Engine, why string, ok bool, err error) {
	proto := map[plan.Proto]string{plan.HTTP2: "HTTP/2", plan.HTTP3: "HTTP/3"}[p.HTTPVersion]
	if proto != "" {
		switch {
		case p.Engine == plan.EngineURing:
			return nil, "", true, fmt.Errorf("--engine uring speaks HTTP/1.1; %s runs on its own engine: drop --engine uring", proto)
		case p.SQPoll:
			return nil, "", true, fmt.Errorf("--sqpoll is an option of the uring engine, which does not speak %s: drop it", proto)
		}
		c, s := p.Connections, p.StreamsPerConn()
		if p.HTTPVersion == plan.HTTP3 {
			return h3engine.Engine{Streams: s}, fmt.Sprintf("%s: the h3 engine (QUIC, %d connections × %d streams)", proto, c, s), true, nil
		}
		return h2engine.Engine{Streams: s}, fmt.Sprintf("%s (%s): the h2 engine (%d connections × %d streams)", proto, p.Protocol(), c, s), true, nil
	}
	what := ""
	switch {
	case p.Vsock:
		what = "--vsock-addr"
	case p.Proxy != nil:
		what = "--proxy"
	default:
		return nil, "", false, nil
	}
	switch {
	case p.Engine == plan.EngineURing:
		return nil, "", true, fmt.Errorf("--engine uring does not dial %s connections: use --engine net (or auto)", what)
	case p.SQPoll:
		return nil, "", true, fmt.Errorf("--sqpoll is an option of the uring engine, which does not dial %s connections: drop it", what)
	case p.Engine == plan.EngineNet:
		return netengine.Engine{}, "--engine net", true, nil
	}
	return netengine.Engine{}, "auto: " + what + " connections are dialed by the net engine", true, nil
}
