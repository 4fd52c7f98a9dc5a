package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/hail-loadgen/hail/internal/dataset"
	"github.com/hail-loadgen/hail/internal/engine"
	"github.com/hail-loadgen/hail/internal/http1"
)

// API is the kind of endpoint: "completions" or "chat".
type API string

// The APIs, and the paths that name them.
const (
	Completions API = "completions" // /v1/completions: a prompt
	Chat        API = "chat"        // /v1/chat/completions: messages
)

// APIFromPath is the API a URL path ends in: .../completions or
// .../chat/completions; ok is false for any other path.
func APIFromPath(path string) (API, bool) {
	p := strings.TrimSuffix(path, "/")
	switch {
	case strings.HasSuffix(p, "/chat/completions"):
		return Chat, true
	case strings.HasSuffix(p, "/completions"):
		return Completions, true
	}
	return "", false
}

// Path is the API's path under an OpenAI-compatible base ("/v1").
func (a API) Path() string {
	if a == Chat {
		return "/chat/completions"
	}
	return "/completions"
}

// Salts of a request's two length draws.
const (
	saltIn  = 0x696e707574
	saltOut = 0x6f7574707574
)

// Spec is what the requests of a run share.
type Spec struct {
	API   API
	Model string
	// Input and Output are the prompt and output lengths, in tokens.
	Input, Output Lengths
	// Exact asks for exactly the output length: min_tokens equal to
	// max_tokens and ignore_eos (vLLM's and SGLang's parameters; servers
	// without them ignore them or refuse them).
	Exact bool
	// Extra are more members of every request's JSON object (--extra-body),
	// as JSON: {"temperature":0}; empty for none.
	Extra string
	// Head is the request's encoded head up to its Content-Length value,
	// Tail the rest of the head after it ("\r\n" …, the empty line
	// included), as SplitHead makes them.
	Head, Tail []byte
	// Seed seeds every draw of a request: its lengths and its prompt's
	// words (and a dataset's order, its own).
	Seed uint64
	// Data is where the prompts come from (package dataset); nil, or
	// random, makes them up from Input.
	Data *dataset.Dataset
	// Counter, if set, is the model's tokenizer: prompts are made of
	// words that are one token each with it.
	Counter Counter
	// Multi, if set, makes the load multi-turn conversations (NewUser's
	// builders, one per connection).
	Multi *MultiTurn

	model  []byte   // Model as a JSON string
	extra  []byte   // Extra's members, without the braces
	words  []string // the prompts' words
	record bool     // requests read their dataset's records (jsonl, sharegpt)
	asked  *ring    // what the requests built asked, for Expect
}

// Init checks the spec and prepares its fixed parts. Its error is about
// Extra (the caller names it: --extra-body, LLM.ExtraBody).
func (s *Spec) Init() error {
	m, err := json.Marshal(s.Model)
	if err != nil {
		return err
	}
	s.model = m
	if e := strings.TrimSpace(s.Extra); e != "" {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(e), &obj); err != nil {
			return fmt.Errorf("%q: not a JSON object (%v): give members to add to every request, e.g. '{\"temperature\":0}'", s.Extra, err)
		}
		inner := bytes.TrimSpace([]byte(e))
		s.extra = bytes.TrimSpace(inner[1 : len(inner)-1])
	}
	s.words = words[:]
	if s.Counter != nil {
		if s.words, err = singleWords(s.Counter); err != nil {
			return err
		}
	}
	if d := s.Data; d != nil && (d.Kind == dataset.JSONL || d.Kind == dataset.ShareGPT) {
		s.record = true
	}
	if (s.record || s.Multi != nil) && s.asked == nil {
		s.asked = new(ring)
	}
	return nil
}

// SplitHead encodes spec (a POST without a body) and splits it at its
// Content-Length value: every request then writes head, its body's length,
// tail and its body.
func SplitHead(spec http1.RequestSpec) (head, tail []byte, err error) {
	spec.Body = nil
	spec.Header = append(spec.Header[:len(spec.Header):len(spec.Header)], [2]string{"Content-Length", "0"})
	if err := spec.Validate(); err != nil {
		return nil, nil, err
	}
	b := http1.AppendRequest(nil, &spec)
	i := bytes.LastIndex(b, []byte("Content-Length: 0\r\n"))
	if i < 0 {
		return nil, nil, fmt.Errorf("llm: no Content-Length in the encoded request")
	}
	i += len("Content-Length: ")
	return b[:i], b[i+1:], nil
}

// Expect is request hit's asked input and output lengths
// (stream.Config.Expect): drawn from its number, or its dataset record's
// (as its builder counted them).
func (s *Spec) Expect(hit uint64) (in, out int) {
	salt := mix(s.Seed, 0x73656564)
	d := s.Data
	switch {
	case s.Multi != nil:
		in, out, _ := s.asked.get(hit)
		return in, out
	case d == nil || d.Kind == dataset.Random:
	case d.Kind == dataset.SharedPrefix:
		return d.PrefixTokens + s.Input.At(hit, saltIn^salt), s.Output.At(hit, saltOut^salt)
	case d.Kind == dataset.Azure:
		r := d.Trace(hit)
		return r.Input, r.Output
	default:
		if in, out, ok := s.asked.get(hit); ok {
			return in, out
		}
		if s.Multi != nil {
			return 0, 0 // a turn built too long ago: its history is gone
		}
		var r dataset.Record
		d.NewReader().Read(hit, &r) // built so long ago that its place was taken
		return r.Input, s.output(hit, &r)
	}
	return s.Input.At(hit, saltIn^salt), s.Output.At(hit, saltOut^salt)
}

// output is the output length of request hit: its record's, or drawn.
func (s *Spec) output(hit uint64, r *dataset.Record) int {
	if r.Output > 0 {
		return r.Output
	}
	return s.Output.At(hit, saltOut^mix(s.Seed, 0x73656564))
}

// Builder builds one worker's requests (engine.Requests).
type Builder struct {
	s         *Spec
	body, req []byte
	rd        *dataset.Reader
	rec       dataset.Record
	conv      *conversation // a multi-turn user's
}

// NewBuilder returns a worker's builder.
func (s *Spec) NewBuilder() *Builder {
	b := &Builder{s: s}
	if s.record {
		b.rd = s.Data.NewReader()
	}
	return b
}

// Next implements engine.Requests: request hit, its prompt and lengths
// drawn from its number, or read from its dataset record.
func (b *Builder) Next(hit uint64) ([]byte, int, bool, bool) {
	s := b.s
	b.Body(hit)
	r := append(b.req[:0], s.Head...)
	r = strconv.AppendInt(r, int64(len(b.body)), 10)
	r = append(r, s.Tail...)
	b.req = append(r, b.body...)
	return b.req, 0, false, true
}

// Body builds the JSON body of request hit (Next's, without its head),
// valid until the next call.
func (b *Builder) Body(hit uint64) []byte {
	s := b.s
	if b.conv != nil {
		b.nextTurn(hit)
	} else if s.record {
		b.rd.Read(hit, &b.rec)
		out := s.output(hit, &b.rec)
		s.asked.put(hit, b.rec.Input, out)
		b.body = s.appendRecord(b.body[:0], &b.rec, out)
	} else {
		in, out := s.Expect(hit)
		b.body = s.AppendBody(b.body[:0], hit, in, out)
	}
	return b.body
}

// Done implements engine.Requests: responses are recorded as they are; a
// multi-turn user's conversation goes on.
func (b *Builder) Done(_ int, p *http1.Parser) engine.Verdict {
	if b.conv != nil {
		return b.doneTurn(p)
	}
	return engine.Verdict{}
}

// AppendBody appends the JSON body of request hit: a prompt of in tokens
// (a shared-prefix group's first), asking for out tokens, streamed, with
// usage.
func (s *Spec) AppendBody(dst []byte, hit uint64, in, out int) []byte {
	dst = s.openPrompt(dst)
	if d := s.Data; d != nil && d.Kind == dataset.SharedPrefix {
		dst = appendPrompt(dst, s.words, d.PrefixTokens, uint64(d.Group(hit)), saltGroup^s.Seed)
		in -= d.PrefixTokens
	}
	dst = appendPrompt(dst, s.words, in, hit, saltPrompt^s.Seed)
	return s.closePrompt(dst, out)
}

// appendRecord appends the JSON body of a dataset record's request,
// asking for out tokens: its prompt, or its messages, as the file has
// them.
func (s *Spec) appendRecord(dst []byte, r *dataset.Record, out int) []byte {
	if r.Messages != nil && s.API == Chat {
		dst = append(dst, `{"model":`...)
		dst = append(dst, s.model...)
		dst = append(dst, `,"messages":`...)
		dst = append(dst, r.Messages...)
		dst = append(dst, `,"max_completion_tokens":`...)
		return s.appendTail(dst, out)
	}
	dst = s.openPrompt(dst)
	dst = append(dst, r.Prompt...)
	return s.closePrompt(dst, out)
}

// openPrompt appends the body up to the prompt's text: into a prompt
// string, or a chat's one user message.
func (s *Spec) openPrompt(dst []byte) []byte {
	dst = append(dst, `{"model":`...)
	dst = append(dst, s.model...)
	if s.API == Chat {
		return append(dst, `,"messages":[{"role":"user","content":"`...)
	}
	return append(dst, `,"prompt":"`...)
}

// closePrompt appends the rest of the body after the prompt's text.
func (s *Spec) closePrompt(dst []byte, out int) []byte {
	if s.API == Chat {
		dst = append(dst, `"}],"max_completion_tokens":`...)
	} else {
		dst = append(dst, `","max_tokens":`...)
	}
	return s.appendTail(dst, out)
}

// appendTail appends the output length's value and the members after it.
func (s *Spec) appendTail(dst []byte, out int) []byte {
	dst = strconv.AppendInt(dst, int64(out), 10)
	if s.Exact {
		dst = append(dst, `,"min_tokens":`...)
		dst = strconv.AppendInt(dst, int64(out), 10)
		dst = append(dst, `,"ignore_eos":true`...)
	}
	dst = append(dst, `,"stream":true,"stream_options":{"include_usage":true}`...)
	if len(s.extra) > 0 {
		dst = append(dst, ',')
		dst = append(dst, s.extra...)
	}
	return append(dst, '}')
}
