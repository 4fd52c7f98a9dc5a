// One step: the names every section refers to (prescan), then each step's
// weight and method, its request (file_request.go) and captures
// (file_capture.go), what it waits for, and a sample request checked as the
// engines would send it.

package scenario

import (
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"gopkg.in/yaml.v3"

	"github.com/hail-loadgen/hail/internal/engine"
	"github.com/hail-loadgen/hail/internal/http1"
)

// prescanSteps learns step names and capture names, which templates,
// flows and thresholds refer to: of the load's steps, then of the setup
// and teardown steps (phaseNodes).
func (l *loader) prescanSteps() error {
	n, ok := l.nodes["steps"]
	if !ok {
		return l.errAt(l.root, "scenario: expected a steps list (each step is one kind of request), found none")
	}
	items, err := l.list(n, "steps")
	if err != nil {
		return err
	}
	if len(items) == 0 {
		return l.errAt(n, "steps: expected at least one step, found an empty list")
	}
	if err := l.prescanList(items, "steps", stepKeys, false); err != nil {
		return err
	}
	if len(items) > maxActivities {
		return l.errAt(n, "steps: expected at most %d steps, found %d", maxActivities, len(items))
	}
	for _, key := range []string{"setup", "teardown"} {
		n, ok := l.nodes[key]
		if !ok {
			continue
		}
		items, err := l.list(n, key)
		if err != nil {
			return err
		}
		if err := l.prescanList(items, key, phaseKeys, key == "setup"); err != nil {
			return err
		}
		l.phaseNodes[key] = items
	}
	return nil
}

// prescanList learns the names and capture names of one list of steps
// (what names it in messages, keys are its steps' keys); the captures of
// setup steps seed their pools.
func (l *loader) prescanList(items []*yaml.Node, list string, keys []string, seeds bool) error {
	for i, it := range items {
		what := fmt.Sprintf("%s[%d]", list, i)
		var name, capNode, targetNode, urlNode, grpcNode *yaml.Node
		if err := l.fields(it, what, keys, func(key string, k, v *yaml.Node) error {
			switch key {
			case "name":
				name = v
			case "capture":
				capNode = v
			case "grpc":
				l.anyGRPC = true
				grpcNode = k
			case "target":
				targetNode = v
			case "url":
				urlNode = v
			}
			return nil
		}); err != nil {
			return err
		}
		k, err := l.originOf(it, targetNode, urlNode, grpcNode)
		if err != nil {
			return err
		}
		l.stepOrigin[it] = k
		if name == nil {
			return l.errAt(it, "%s: expected a name (name: create), found none", what)
		}
		nm, err := l.str(name, what+".name")
		if err != nil {
			return err
		}
		if !nameRE.MatchString(nm) {
			return l.errAt(name, "%s.name: expected letters, digits, _ . or - (no spaces), found %q", what, nm)
		}
		if prev, dup := l.names[nm]; dup {
			return l.errAt(name, "%s.name: duplicate step name %q (first at line %d)", what, nm, prev.Line)
		}
		l.names[nm] = it
		if list == "steps" {
			l.stepIdx[nm] = i
			l.stepNodes = append(l.stepNodes, it)
		}
		if capNode != nil {
			if err := l.fields(capNode, nm+".capture", nil, func(key string, k, v *yaml.Node) error {
				if !nameRE.MatchString(key) {
					return l.errAt(k, "%s.capture: pool name %q: expected letters, digits, _ . or -", nm, key)
				}
				if _, ok := l.capIdx[key]; !ok {
					l.capIdx[key] = len(l.s.captures)
					l.s.captures = append(l.s.captures, key)
				}
				p := l.addPool(key)
				l.seeded[p] = l.seeded[p] || seeds
				return nil
			}); err != nil {
				return err
			}
		}
	}
	return nil
}

// steps compiles every step.
func (l *loader) steps() error {
	for _, it := range l.stepNodes {
		st, err := l.step(it)
		if err != nil {
			return err
		}
		l.s.Steps = append(l.s.Steps, st)
	}
	return nil
}

// stepFields are one step's values and keys, by key name.
type stepFields struct {
	vals, keys map[string]*yaml.Node
}

// step compiles one step: weight and method, the request's target,
// headers and body, the captures, what the step waits for, and a sample
// request checked as the engines would send it. Each part reports its own
// problems in the order a reader meets them in the file.
func (l *loader) step(it *yaml.Node) (*Step, error) {
	n := stepFields{vals: map[string]*yaml.Node{}, keys: map[string]*yaml.Node{}}
	keys := stepKeys
	if l.phase {
		keys = phaseKeys
	}
	_ = l.fields(it, "step", keys, func(key string, k, v *yaml.Node) error {
		n.vals[key], n.keys[key] = v, k
		return nil
	})
	st := &Step{Name: n.vals["name"].Value, Weight: 1, Method: "GET", origin: l.stepOrigin[it]}
	l.cur = st.origin
	if err := l.stepWeightMethod(st, n); err != nil {
		return nil, err
	}
	env := *l.env
	env.Refs, env.Lasts, env.FeedRefs = &st.refs, &st.lasts, &st.feeds
	env.Where = "step " + st.Name
	host := ""
	if n.vals["grpc"] != nil && n.vals["llm"] == nil {
		if err := l.grpcRequest(st, it, n, &env); err != nil {
			return nil, err
		}
		host = l.s.Origins[st.origin].URL.Host
	} else if n.vals["llm"] != nil {
		h, err := l.llmRequest(st, it, n, &env)
		if err != nil {
			return nil, err
		}
		host = h
	} else {
		target, h, err := l.stepTarget(st, it, n, &env)
		if err != nil {
			return nil, err
		}
		host = h
		if err := l.stepHeaders(st, n, target, host, &env); err != nil {
			return nil, err
		}
		if err := l.stepBody(st, n, &env); err != nil {
			return nil, err
		}
	}
	if err := l.stepCaptures(st, n.vals["capture"]); err != nil {
		return nil, err
	}
	if err := l.stepExpect(st, n.vals["expect"]); err != nil {
		return nil, err
	}
	if v := n.vals["think"]; v != nil {
		t, err := l.thinkTime(v, st.Name+".think")
		if err != nil {
			return nil, err
		}
		st.think = t
		if !l.phase {
			l.thinkNode = v
		}
	}
	if err := l.stepRepeat(st, n.vals["repeat"]); err != nil {
		return nil, err
	}
	if v := n.vals["concurrency"]; v != nil {
		c, err := l.integer(v, st.Name+".concurrency", 1, maxConnections)
		if err != nil {
			return nil, err
		}
		st.concurrency = int(c)
	}
	l.stepWaits(st)
	if err := l.stepSample(st, it, host); err != nil {
		return nil, err
	}
	return st, nil
}

// stepWeightMethod reads the step's weight and method, and what the
// method implies for the request's framing.
func (l *loader) stepWeightMethod(st *Step, n stepFields) error {
	what := st.Name
	if v, ok := n.vals["weight"]; ok {
		w, err := l.number(v, what+".weight")
		if err != nil {
			return err
		}
		st.Weight = w
		l.weightSet = append(l.weightSet, true)
	} else if !l.phase {
		l.weightSet = append(l.weightSet, false)
	}
	if v, ok := n.vals["method"]; ok {
		m, err := l.str(v, what+".method")
		if err != nil {
			return err
		}
		m = strings.ToUpper(strings.TrimSpace(m))
		if !isToken(m) {
			return l.errAt(v, "%s.method: expected a method such as GET, POST or DELETE, found %q", what, m)
		}
		st.Method = m
	}
	st.sendsCL = st.Method == "POST" || st.Method == "PUT" || st.Method == "PATCH"
	st.isHead = st.Method == "HEAD"
	st.close = !l.s.Settings.KeepAlive
	return nil
}

// stepCaptures compiles the step's capture mapping (nil when it has none).
func (l *loader) stepCaptures(st *Step, n *yaml.Node) error {
	if n == nil {
		return nil
	}
	what := st.Name + ".capture"
	return l.fields(n, what, nil, func(name string, k, v *yaml.Node) error {
		c, err := l.capture(what+"."+name, v)
		if err != nil {
			return err
		}
		if c.kind == capLLM && st.llm == nil {
			return l.errAt(v, "%s.%s: an llm capture takes a token stream's tokens: expected it on an llm step (llm:)", what, name)
		}
		c.name, c.id = name, l.capIdx[name]
		c.pool = l.s.Pools[l.poolIdx[name]]
		st.captures = append(st.captures, c)
		return nil
	})
}

// stepWaits records what the step waits for (its yield reasons, in the
// order build checks them) and whether it needs a captured value before
// it can first run.
func (l *loader) stepWaits(st *Step) {
	s := l.s
	for _, r := range st.refs {
		l.poolUsed[r.Pool] = true
		st.reasons = append(st.reasons, fmt.Sprintf("pool `%s` empty", s.Pools[r.Pool].Name))
	}
	for _, c := range st.lasts {
		st.reasons = append(st.reasons, fmt.Sprintf("no `%s` captured yet by this virtual user", s.captures[c]))
	}
	for _, f := range st.feeds {
		st.reasons = append(st.reasons, fmt.Sprintf("feed `%s` used up", s.Feeds[f].Name))
	}
	if st.grpc != nil && st.body != nil {
		st.reasons = append(st.reasons, grpcYield) // the last reason (builder.go)
	}
	st.yields = make([]atomic.Int64, len(st.reasons))
	s.maxSlots = max(s.maxSlots, len(st.refs))
	needs := len(st.lasts) > 0
	for _, r := range st.refs {
		needs = needs || !l.seeded[r.Pool]
	}
	if !l.phase {
		l.firstNeeds = append(l.firstNeeds, needs)
	}
}

// stepSample checks a sample request as the engines would send it, and
// pre-encodes the step's requests when nothing in them varies.
// Captured values stand in as "/x": a path may start with one (a captured
// Location header, say).
func (l *loader) stepSample(st *Step, it *yaml.Node, host string) error {
	v := l.sampleVU(st, "/x")
	sample := st.head.AppendTo(nil, &v.ctx)
	if err := checkSample(st, sample, host); err != nil {
		return l.errAt(it, "%s: %v", st.Name, err)
	}
	if st.head.Static() && st.body == nil && st.llm == nil && len(st.refs) == 0 && len(st.lasts) == 0 {
		bodies := st.lines
		if bodies == nil {
			bodies = [][]byte{st.bodyLit}
		}
		for _, b := range bodies {
			v := encodeTail(append([]byte(nil), st.head.Literal()...), b, st.sendsCL, st.close, st.shared())
			st.variants = append(st.variants, v)
		}
	}
	return nil
}

// sampleVU is a virtual user that expands a sample of st's request at
// load: every pool value and captured value reads as slot, and every feed
// gives its first row.
func (l *loader) sampleVU(st *Step, slot string) *vu {
	s := l.s
	v := newVU(&Scenario{maxSlots: len(st.refs), captures: s.captures, Pools: s.Pools, Feeds: s.Feeds}, 0)
	clear(v.ctx.Rows) // row 0 of every feed
	for k := range v.ctx.Slots {
		v.ctx.Slots[k] = slot
	}
	for k := range v.ctx.Last {
		v.ctx.Last[k] = []byte(slot)
	}
	return v
}

// encodeTail finishes a request after its head: Content-Length (when there
// is a body or the method has one), Connection: close, the empty line and
// the body (unless it is shared: then it follows from where it is). It
// matches http1.AppendRequest byte for byte.
func encodeTail(b, body []byte, sendsCL, close, shared bool) []byte {
	if sendsCL || len(body) > 0 {
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, int64(len(body)), 10)
		b = append(b, "\r\n"...)
	}
	if close {
		b = append(b, "Connection: close\r\n"...)
	}
	b = append(b, "\r\n"...)
	if shared {
		return b
	}
	return append(b, body...)
}

// shared reports whether st's body is sent apart from its requests
// (engine.SharedBody): a fixed body of engine.SplitAt bytes or more.
func (st *Step) shared() bool {
	return len(st.bodyLit) >= engine.SplitAt && st.body == nil && st.lines == nil && st.grpc == nil
}

// checkSample validates an expanded request head with http1's rules.
func checkSample(st *Step, head []byte, host string) error {
	lines := strings.Split(strings.TrimSuffix(string(head), "\r\n"), "\r\n")
	first := strings.SplitN(lines[0], " ", 3)
	if len(first) != 3 {
		return fmt.Errorf("the request line %q is malformed", lines[0])
	}
	spec := http1.RequestSpec{Method: first[0], Target: first[1], Proto: first[2]}
	for _, h := range lines[1:] {
		name, val, _ := strings.Cut(h, ": ")
		if strings.EqualFold(name, "host") {
			spec.Host = val
			continue
		}
		spec.Header = append(spec.Header, [2]string{name, val})
	}
	if err := spec.Validate(); err != nil {
		return fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "http1: "))
	}
	return nil
}
