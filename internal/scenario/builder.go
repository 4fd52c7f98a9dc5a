package scenario

import (
	"strconv"

	"github.com/hail-loadgen/hail/internal/engine"
	"github.com/hail-loadgen/hail/internal/http1"
	"github.com/hail-loadgen/hail/internal/llm"
	"github.com/hail-loadgen/hail/internal/random"
	"github.com/hail-loadgen/hail/internal/scenario/template"
	"github.com/hail-loadgen/hail/internal/status"
)

// vu is one worker's request builder: a virtual user. It implements
// engine.Requests. Next picks a step (or walks its current flow), resolves
// the pool values the step needs, and expands the step's templates into
// the worker's own buffer; a step with nothing to expand returns its
// pre-encoded bytes. Done runs the step's checks and captures on the
// response, copying the captured bytes out of the parser's buffer, and
// draws the think time.
//
// A step that needs a value its pool does not have (or a {{last}} this
// virtual user has not captured yet, or a row of a used-up unique feed)
// yields: the choice falls to another
// step by weight, the yield is counted, and no request is ever sent with a
// missing value. Within a flow, such a step ends the flow early.
type vu struct {
	s       *Scenario
	mix     *mix // the choice among steps and flows: the scenario's, or one origin's
	id      int
	rng     *random.Rand
	ctx     template.Ctx
	buf     []byte
	body    []byte
	scratch []byte
	msg     []byte      // a gRPC step's encoded messages
	msgJSON []byte      // a gRPC response message as protojson, for captures
	convs   []convState // the llm steps' conversations in this iteration
	// builders are the llm steps' request builders of a dataset, by step
	builders []*llm.Builder
	pairs    [][2][]byte // a conversation's turns being sent
	// tokIn and tokOut are the tokens of the token stream Done is about
	// to see (tokSet: there is one), for llm captures (StreamTokens).
	tokIn, tokOut int64
	tokSet        bool
	lastSet       []bool
	excl          []bool
	flow          int // the flow being walked, -1 for none
	pos           int // the next step of the flow
	// flowThink is the think time of the flow the last request belonged
	// to (unset outside flows). Flows give every virtual user its own
	// builder, so Done sees the flow of the request Next built last.
	flowThink thinkTime
	// failedCheck is the check the last response Done judged failed.
	failedCheck *check
	// yielded is the reason (an index of the step's reasons) of the
	// last build that yielded.
	yielded int
	// took are the values the last build took from pools (take refs);
	// held are the reservations of requests built and not yet ended
	// (engine.Reserver), free the reusable ones.
	took []taken
	held []reservation
	free []uint32
}

// taken is one value a request took from a pool.
type taken struct {
	pool int
	val  string
}

// reservation is what one request took from pools: it goes back if the
// request is never sent.
type reservation struct{ vals []taken }

func newVU(s *Scenario, worker int) *vu {
	v := &vu{s: s, mix: &s.mix, id: worker, flow: -1,
		rng:     random.New(s.seed ^ random.SplitMix(uint64(worker)+1)),
		lastSet: make([]bool, len(s.captures)),
		excl:    make([]bool, len(s.mix.acts)),
		buf:     make([]byte, 0, 512),
	}
	v.ctx.Rand = v.rng
	v.ctx.Slots = make([]string, s.maxSlots)
	v.ctx.Last = make([][]byte, len(s.captures))
	v.ctx.Rows = make([]int32, len(s.Feeds))
	v.convs = make([]convState, s.convs)
	v.newRows()
	return v
}

// Next implements engine.Requests.
func (v *vu) Next(hit uint64) ([]byte, int, bool, bool) {
	s := v.s
	v.ctx.Hit = hit
	v.flowThink = thinkTime{}
	v.took = v.took[:0]
	if v.flow < 0 {
		v.newRows()
	}
	if v.flow >= 0 {
		f := s.Flows[v.flow]
		st := f.steps[v.pos]
		v.pos++
		if v.pos == len(f.steps) {
			v.flow = -1
		}
		if req, ok := v.build(st); ok {
			v.flowThink = f.think
			return req, st, s.Steps[st].isHead, true
		}
		v.flow = -1 // the flow cannot go on: start a new choice
		v.newRows()
	}
	m := v.mix
	a := m.pick(v.rng)
	if s.feedEnd.exclude(a, v.excl) { // its unique feed is used up: it is no longer chosen
		if a = m.pickExcluding(v.rng, v.excl); a < 0 {
			return nil, 0, false, false
		}
	}
	for tries := 0; ; tries++ {
		act := m.acts[a]
		st := act.step
		if act.flow >= 0 {
			st = s.Flows[act.flow].steps[0]
		}
		if req, ok := v.build(st); ok {
			if act.flow >= 0 {
				v.flowThink = s.Flows[act.flow].think
				if len(s.Flows[act.flow].steps) > 1 {
					v.flow, v.pos = act.flow, 1
				}
			}
			return req, st, s.Steps[st].isHead, true
		}
		if tries == 0 && !s.feedEnd.exclude(a, v.excl) {
			clear(v.excl)
		}
		v.excl[a] = true
		if a = m.pickExcluding(v.rng, v.excl); a < 0 {
			return nil, 0, false, false
		}
	}
}

// newRows forgets the feed rows and conversations of the previous
// request (or flow iteration): the next request takes new ones.
func (v *vu) newRows() {
	for i := range v.ctx.Rows {
		v.ctx.Rows[i] = -1
	}
	v.newConversations()
}

// build encodes step i's request, or reports false (and counts a yield)
// when a value it needs is missing.
func (v *vu) build(i int) ([]byte, bool) {
	st := v.s.Steps[i]
	if st.variants != nil {
		if len(st.variants) == 1 {
			return st.variants[0], true
		}
		return st.variants[(st.lineNext.Add(1)-1)%uint64(len(st.variants))], true
	}
	for k, id := range st.lasts {
		if !v.lastSet[id] {
			return v.yield(st, len(st.refs)+k)
		}
	}
	for k, ref := range st.refs {
		p := v.s.Pools[ref.Pool]
		var val string
		var ok bool
		if ref.Take {
			val, ok = p.Take(v.rng)
		} else {
			val, ok = p.Pick(v.rng)
		}
		if !ok {
			v.giveBack(st, k)
			return v.yield(st, k)
		}
		v.ctx.Slots[k] = val
	}
	for k, f := range st.feeds {
		if v.ctx.Rows[f] >= 0 {
			continue
		}
		row, ok := v.s.Feeds[f].Row(v.rng)
		if !ok {
			v.giveBack(st, len(st.refs))
			return v.yield(st, len(st.refs)+len(st.lasts)+k)
		}
		v.ctx.Rows[f] = row
	}
	b := st.head.AppendTo(v.buf[:0], &v.ctx)
	var body []byte
	switch {
	case st.llm != nil:
		body = v.buildLLM(st, v.ctx.Hit)
	case st.body != nil:
		v.body = st.body.AppendTo(v.body[:0], &v.ctx)
		body = v.body
		if st.grpc != nil {
			msg, err := st.grpc.encode(v.msg[:0], body, v.ctx.Hit)
			if err != nil {
				v.giveBack(st, len(st.refs))
				return v.yield(st, len(st.yields)-1)
			}
			v.msg, body = msg, msg
		}
	case st.lines != nil:
		body = st.lines[(st.lineNext.Add(1)-1)%uint64(len(st.lines))]
	default:
		body = st.bodyLit
	}
	if st.sendsCL || len(body) > 0 {
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, int64(len(body)), 10)
		b = append(b, "\r\n"...)
	}
	if st.close {
		b = append(b, "Connection: close\r\n"...)
	}
	b = append(b, "\r\n"...)
	if !st.shared() { // a shared body follows from where it is (Body)
		b = append(b, body...)
	}
	v.buf = b
	v.took = v.took[:0]
	for k, ref := range st.refs {
		if ref.Take {
			v.took = append(v.took, taken{ref.Pool, v.ctx.Slots[k]})
		}
		v.ctx.Slots[k] = ""
	}
	return b, true
}

// Body implements engine.SharedBody: a step's body_file of
// engine.SplitAt or more follows its head from where it is, never copied
// into a virtual user's request.
func (v *vu) Body(_ uint64, step int) []byte {
	if st := v.s.Steps[step]; st.shared() {
		return st.bodyLit
	}
	return nil
}

// Reserved implements engine.Reserver: a token for the values the request
// built last took from pools (0 when it took none).
func (v *vu) Reserved() uint32 {
	if len(v.took) == 0 {
		return 0
	}
	var i uint32
	if n := len(v.free); n > 0 {
		i, v.free = v.free[n-1], v.free[:n-1]
	} else {
		v.held = append(v.held, reservation{})
		i = uint32(len(v.held))
	}
	r := &v.held[i-1]
	r.vals = append(r.vals[:0], v.took...)
	v.took = v.took[:0]
	return i
}

// Release implements engine.Reserver: a request that was never sent puts
// the values it took back into their pools (a DELETE that never left must
// not lose the id it was to delete).
func (v *vu) Release(token uint32, unsent bool) {
	if token == 0 || int(token) > len(v.held) {
		return
	}
	r := &v.held[token-1]
	if unsent {
		for _, t := range r.vals {
			v.s.Pools[t.pool].Put(t.val, v.id)
		}
	}
	clear(r.vals)
	r.vals = r.vals[:0]
	v.free = append(v.free, token)
}

// yield counts a build of st that cannot go on for its reason k, and
// notes k as the reason of the last yield.
func (v *vu) yield(st *Step, k int) ([]byte, bool) {
	st.yields[k].Add(1)
	v.yielded = k
	return nil, false
}

// giveBack returns to their pools the values the first k refs of st took
// for a request that will not be sent.
func (v *vu) giveBack(st *Step, k int) {
	for j := range k {
		if st.refs[j].Take {
			v.s.Pools[st.refs[j].Pool].Put(v.ctx.Slots[j], v.id)
		}
	}
}

// Done implements engine.Requests: it runs the step's checks on the
// response (the first that fails makes the response an error of its kind,
// and nothing is captured from it), then its captures, and draws the
// think time before the virtual user's next request. A gRPC step's checks
// and captures read its first response message as protojson.
func (v *vu) Done(step int, p *http1.Parser) engine.Verdict {
	st := v.s.Steps[step]
	verdict := engine.Verdict{Think: v.think(st)}
	tokSet := v.tokSet
	v.tokSet = false
	if st.llm != nil {
		v.doneLLM(st, p)
	}
	if p == nil {
		return verdict
	}
	if st.grpc != nil && (len(st.captures) > 0 || st.checksBody) {
		body := p.Body
		if !st.grpc.captureBody(p, &v.msgJSON) {
			v.msgJSON = v.msgJSON[:0]
		}
		p.Body = v.msgJSON
		defer func() { p.Body = body }()
	}
	for _, c := range st.checks {
		if !c.pass(p, &v.scratch) {
			c.failed.Add(1)
			v.failedCheck = c
			verdict.Failed, verdict.Kind = true, c.kind.errorKind()
			return verdict
		}
	}
	verdict.Expected = status.Failed(p.Status) && st.checksStatus
	for _, c := range st.captures {
		var val []byte
		var ok bool
		if c.kind == capLLM {
			val, ok = c.tokens(&v.scratch, v.tokIn, v.tokOut, tokSet)
		} else {
			val, ok = c.extract(p, &v.scratch)
		}
		if !ok || len(val) == 0 {
			st.missed.Add(1)
			continue
		}
		st.captured.Add(1)
		v.ctx.Last[c.id] = append(v.ctx.Last[c.id][:0], val...)
		v.lastSet[c.id] = true
		if c.pool != nil {
			c.pool.Put(string(val), v.id)
		}
	}
	return verdict
}
