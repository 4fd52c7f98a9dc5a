package engine

import (
	"time"

	"github.com/hail-loadgen/hail/internal/http1"
	"github.com/hail-loadgen/hail/internal/stats"
)

// Requests builds the requests of a run and observes their responses.
// Every worker gets its own instance from Job.NewRequests, so per-worker
// state needs no locking; anything shared between instances (such as a
// scenario's pools of captured ids) must be safe for concurrent use.
type Requests interface {
	// Next returns the wire bytes of request number hit, the index of its
	// step in Job.Steps, and whether it is a HEAD request (its response has
	// no body). The bytes stay valid until the next call: a builder keeps
	// its own buffer, or returns shared pre-encoded bytes. ok=false skips this request number (for instance when a step
	// needs a captured value that is not there yet): the engine then calls
	// Next again with the next number it claims.
	Next(hit uint64) (req []byte, step int, head bool, ok bool)
	// Done is called once for every request Next returned, when it ends:
	// with the parsed response, or with p == nil when it failed. Its
	// Verdict says how the response is recorded (Call.Respond) and how
	// long the virtual user thinks before its next request.
	Done(step int, p *http1.Parser) Verdict
}

// Reserver is a Requests that reserves shared state for a request it
// builds — a scenario's take of a pooled id — which must go back if the
// request is never sent (its connection failed, or the run ended first).
// Engines hand it to the request's Call (Call.Reserve) right after Next.
type Reserver interface {
	// Reserved returns a token for what the request Next built last
	// reserved, or 0 when it reserved nothing.
	Reserved() uint32
	// Release ends the reservation: the request was sent (what it took is
	// its to use), or never sent (unsent): what it took goes back.
	Release(token uint32, unsent bool)
}

// TokenReader is implemented by request builders that read what a token
// stream measured (a scenario's llm steps capture its tokens): for a
// token stream that ended well, Call.Respond hands them its input and
// output tokens (stream.Meter.Tokens) just before Done.
type TokenReader interface {
	StreamTokens(in, out int64)
}

// Verdict is what Requests.Done made of a request's end. The zero Verdict
// records a response as it is and sends the next request at once.
type Verdict struct {
	// Failed says the response failed one of its step's checks: it is
	// recorded as error Kind instead of as a response.
	Failed bool
	Kind   stats.ErrorKind
	// Expected says the response's status counts as failed (HTTP ≥ 400,
	// a gRPC status other than OK) but its step expects it: it is a
	// response, not a failure.
	Expected bool
	// Think is how long the virtual user pauses before its next request
	// (closed model only; engines ignore it in the open model).
	Think time.Duration
}

// SharedBody is implemented by Requests some of whose requests Next
// returns as their head alone: their body, too large to copy into every
// request (a -D file of hundreds of MB), is one slice that every request,
// redirect hop and retry sends from. Engines write the head, then the
// body (net.Buffers, a second send), and never copy the body.
type SharedBody interface {
	// Body returns the body that follows request hit of step (as Next
	// returned it), or nil when the request holds its own body. The bytes
	// stay valid and unchanged for the run.
	Body(hit uint64, step int) []byte
}

// SharedBodies returns r's SharedBody, or nil when it has none: engines
// ask once per worker, then per request only when it is not nil.
func SharedBodies(r Requests) SharedBody {
	if s, ok := r.(SharedBody); ok {
		if st, static := r.(*Static); !static || st.Bodies != nil {
			return s
		}
	}
	return nil
}

// SplitAt is the size from which a request's body is kept apart from its
// head (SharedBody) rather than encoded into every request variant.
const SplitAt = 1 << 20

// Static serves a fixed set of pre-encoded request variants: request number
// hit is Variants[hit % len(Variants)], all in step 0.
type Static struct {
	// Variants are the encoded requests.
	Variants [][]byte
	// Bodies, when set, are the variants' shared bodies (SharedBody):
	// Variants[i] is then a head alone when Bodies[i] is not nil.
	Bodies [][]byte
	// Head marks HEAD requests.
	Head bool
}

// Next implements Requests.
func (s *Static) Next(hit uint64) ([]byte, int, bool, bool) {
	return s.Variants[hit%uint64(len(s.Variants))], 0, s.Head, true
}

// Body implements SharedBody.
func (s *Static) Body(hit uint64, _ int) []byte {
	if s.Bodies == nil {
		return nil
	}
	return s.Bodies[hit%uint64(len(s.Bodies))]
}

// Done implements Requests.
func (s *Static) Done(int, *http1.Parser) Verdict { return Verdict{} }
