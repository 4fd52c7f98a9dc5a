package scenario

import (
	"fmt"

	"github.com/hail-loadgen/hail/internal/dataset"
	"github.com/hail-loadgen/hail/internal/http1"
	"github.com/hail-loadgen/hail/internal/llm"
	"github.com/hail-loadgen/hail/internal/scenario/template"
	"github.com/hail-loadgen/hail/internal/stream"
	"github.com/hail-loadgen/hail/result"
)

// llmStep is what an llm step adds to a step: what it asks of the model
// (its body is package llm's, around the step's prompt), its objectives,
// and the conversation it belongs to. Its streams are measured by the
// run's stream meters as hail llm's are (stream.Config.Steps).
type llmStep struct {
	spec       *llm.Spec
	prompt     *template.Template // a JSON string of the prompt; nil: made-up words of spec.Input
	slo        stream.SLO
	conv       int // the conversation (Scenario.convs), -1 for none
	convName   string
	maxContext int // a conversation's history bound, in tokens (0: none)
	index      int // the step's index among the load's steps
}

// turn is one user turn of a conversation and its reply, JSON-escaped,
// with their tokens.
type turn struct {
	user, reply []byte
	in, out     int
}

// convState is one virtual user's conversation in progress within one
// iteration of a flow: its turns so far, and the turn in flight.
type convState struct {
	turns   []turn
	pending turn
	built   bool   // a turn was built and is in flight
	hit     uint64 // its request number
}

// buildLLM appends step st's request body for request hit: its prompt
// (the template's expansion, or made-up words), as one user message, or
// as the next turn of its conversation with the turns before it
// (truncated to the step's bound by dropping the oldest).
func (v *vu) buildLLM(st *Step, hit uint64) []byte {
	l := st.llm
	s := l.spec
	if s.Data != nil { // the dataset's prompts, as hail llm builds them
		if v.builders == nil {
			v.builders = make([]*llm.Builder, len(v.s.Steps))
		}
		b := v.builders[l.index]
		if b == nil {
			b = s.NewBuilder()
			v.builders[l.index] = b
		}
		body := b.Body(hit)
		in, out := s.Expect(hit)
		v.s.asked.Put(hit, in, out)
		return body
	}
	out := s.Output.At(hit, saltLLMOut)
	var prompt []byte
	in := 0
	if l.prompt != nil {
		q := l.prompt.AppendTo(v.scratch[:0], &v.ctx)
		v.scratch = q[:0]
		prompt = q[1 : len(q)-1] // within its quotes
		in = dataset.Words{}.Count(prompt)
	} else {
		in = s.Input.At(hit, saltLLMIn)
		prompt = s.AppendWords(v.scratch[:0], in, hit)
		v.scratch = prompt[:0]
	}
	if l.conv < 0 {
		v.s.asked.Put(hit, in, out)
		v.body = s.AppendPrompt(v.body[:0], prompt, out)
		return v.body
	}
	c := &v.convs[l.conv]
	total := in
	for _, t := range c.turns {
		total += t.in + t.out
	}
	first := 0
	for ; l.maxContext > 0 && total > l.maxContext && first < len(c.turns); first++ {
		total -= c.turns[first].in + c.turns[first].out
	}
	v.s.asked.Put(hit, total, out)
	c.pending = turn{user: append(c.pending.user[:0], prompt...), in: in, out: out}
	c.built, c.hit = true, hit
	v.pairs = v.pairs[:0]
	for _, t := range c.turns[first:] {
		v.pairs = append(v.pairs, [2][]byte{t.user, t.reply})
	}
	v.body = s.AppendTurns(v.body[:0], v.pairs, c.pending.user, out)
	return v.body
}

// Salts of an llm step's two length draws (package llm draws hail llm's
// with its own).
const (
	saltLLMIn    = 0x6c6c6d696e
	saltLLMOut   = 0x6c6c6d6f7574
	saltLLMReply = 0x7265706c79 << 24
)

// doneLLM ends an llm step's request: a reply (2xx) adds the turn and a
// made-up reply of the length asked for to its conversation, as hail llm
// --multi-turn's histories hold (what the server answered is not read
// back, so every run sends the same conversations); a failure leaves the
// turn out.
func (v *vu) doneLLM(st *Step, p *http1.Parser) {
	l := st.llm
	if l.conv < 0 {
		return
	}
	c := &v.convs[l.conv]
	if !c.built {
		return
	}
	c.built = false
	if p == nil || p.Status < 200 || p.Status > 299 {
		return
	}
	n := len(c.turns) // an earlier iteration's turn's buffers are reused
	if n < cap(c.turns) {
		c.turns = c.turns[:n+1]
	} else {
		c.turns = append(c.turns, turn{})
	}
	t := &c.turns[n]
	t.in, t.out = c.pending.in, c.pending.out
	t.user = append(t.user[:0], c.pending.user...)
	t.reply = l.spec.AppendWords(t.reply[:0], t.out, c.hit^saltLLMReply)
}

// newConversations forgets the virtual user's conversations: a new
// iteration (of a flow, or a step outside flows) begins.
func (v *vu) newConversations() {
	for i := range v.convs {
		c := &v.convs[i]
		c.turns, c.built = c.turns[:0], false
	}
}

// StreamTokens implements engine.TokenReader: the input and output tokens
// of the token stream whose response Done is about to see, for the
// step's llm captures.
func (v *vu) StreamTokens(in, out int64) { v.tokIn, v.tokOut, v.tokSet = in, out, true }

// expect is the run's stream.Config.Expect: the lengths the llm step
// request hit asked for (-1: unknown).
func (s *Scenario) expect(hit uint64) (in, out int) {
	if in, out, ok := s.asked.Get(hit); ok {
		return in, out
	}
	return -1, -1
}

// StreamConfig is how the load's streams are read (nil without llm
// steps): the llm steps' as token streams with their objectives, the
// other steps' as plain event streams.
func (s *Scenario) StreamConfig() *stream.Config {
	if !s.anyLLM {
		return nil
	}
	c := &stream.Config{Tokens: true, Expect: s.expect, Steps: make([]stream.StepStreams, len(s.Steps))}
	for i, st := range s.Steps {
		if st.llm != nil {
			c.Steps[i] = stream.StepStreams{Tokens: true, SLO: st.llm.slo}
		}
	}
	return c
}

// annotateLLM puts what each llm step asked into its hail.steps[] entry's
// llm (API, model, lengths, objectives), and into hail.llm what every llm
// step shares of it (it sums their streams).
func (s *Scenario) annotateLLM(res *result.Result) {
	var shared *result.LLM
	same := true
	for _, st := range s.Steps {
		if st.llm == nil {
			// The collector's totals may give any step of a run with
			// token streams an empty token part: only llm steps have one.
			for i := range res.Hail.Steps {
				if r := &res.Hail.Steps[i]; r.Name == st.Name {
					r.LLM = nil
				}
			}
			continue
		}
		ls := st.llm
		in, out := ls.spec.Input.String(), ls.spec.Output.String()
		switch d := ls.spec.Data; {
		case ls.prompt != nil:
			in = "prompt"
		case d != nil && d.Kind == dataset.SharedPrefix:
			in = fmt.Sprintf("%d shared + %s", d.PrefixTokens, in)
		case d != nil:
			in, out = d.Spec.String(), d.Spec.String()+" (else "+out+")"
		}
		if ls.conv >= 0 {
			in += " per turn, with conversation " + ls.convName
		}
		asked := &result.LLM{API: string(ls.spec.API), Model: ls.spec.Model, InputAsked: in, OutputAsked: out}
		asked.SetSLO(ls.slo.TTFT, ls.slo.TPOT, ls.slo.E2E)
		for i := range res.Hail.Steps {
			if r := &res.Hail.Steps[i]; r.Name == st.Name && r.LLM != nil {
				r.LLM.KeepAsked(asked)
			}
		}
		switch {
		case shared == nil:
			shared = asked
		case shared.API != asked.API || shared.Model != asked.Model || shared.InputAsked != asked.InputAsked ||
			shared.OutputAsked != asked.OutputAsked || !sameSLO(shared.SLO, asked.SLO):
			same = false
		}
	}
	if shared == nil || res.Hail.LLM == nil {
		return
	}
	if !same {
		shared = &result.LLM{}
	}
	res.Hail.LLM.KeepAsked(shared)
	// vLLM's failed are the llm steps' requests that did not complete,
	// not the other steps'.
	res.Hail.LLM.Failed = 0
	for _, r := range res.Hail.Steps {
		if r.LLM != nil {
			res.Hail.LLM.Failed += r.LLM.Failed
		}
	}
}

// sameSLO reports whether two steps' objectives are the same.
func sameSLO(a, b *result.SLO) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

// describe says what the step asks of the model, for hail run --check.
func (l *llmStep) describe() string {
	s := l.spec
	in := s.Input.String() + " made-up input tokens"
	switch {
	case l.prompt != nil:
		in = "a prompt template"
	case s.Data != nil:
		in = "dataset " + s.Data.Spec.String()
	}
	out := fmt.Sprintf("%s API, model %s, %s → %s output tokens", s.API, s.Model, in, s.Output)
	if l.slo.Any() {
		out += ", slo " + l.slo.String()
	}
	if l.conv >= 0 {
		out += ", conversation " + l.convName
		if l.maxContext > 0 {
			out += fmt.Sprintf(" (at most %d tokens of history)", l.maxContext)
		}
	}
	return out
}
