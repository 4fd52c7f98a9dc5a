package dataset

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Kind is a kind of dataset.
type Kind string

// The kinds.
const (
	// Random is package llm's synthetic load: prompts of random words of
	// --input-tokens' lengths (no dataset).
	Random Kind = "random"
	// SharedPrefix is synthetic too: Groups groups of requests, each
	// group's prompts starting with the same PrefixTokens tokens, then a
	// suffix of --input-tokens' length of the request's own.
	SharedPrefix Kind = "shared-prefix"
	// JSONL is a JSON Lines file: one {"prompt": …} or {"messages": […]}
	// per line, "output_tokens" optional (jsonl.go).
	JSONL Kind = "jsonl"
	// ShareGPT is a ShareGPT file: a JSON array of conversations, the
	// first human turn the prompt and the reply's length the output
	// length (sharegpt.go).
	ShareGPT Kind = "sharegpt"
	// Azure is an Azure LLM inference trace (CSV: TIMESTAMP,
	// ContextTokens, GeneratedTokens): lengths and arrival times
	// (trace.go).
	Azure Kind = "azure"
)

// Spec is a parsed --dataset: random, shared-prefix:groups=G,prefix=P,
// jsonl:FILE, sharegpt:FILE or azure:FILE.
type Spec struct {
	Kind Kind
	// Path is the file of jsonl, sharegpt and azure.
	Path string
	// Groups and PrefixTokens shape shared-prefix.
	Groups, PrefixTokens int
}

// specHelp says what ParseSpec accepts.
const specHelp = "give random, shared-prefix:groups=G,prefix=P, jsonl:FILE, sharegpt:FILE or azure:FILE (an Azure LLM inference trace)"

// maxPrefix bounds a shared prefix's tokens (prompts are built in memory).
const maxPrefix = 1 << 20

// ParseSpec parses a dataset spec; its error says what is accepted.
func ParseSpec(s string) (Spec, error) {
	kind, arg, hasArg := strings.Cut(strings.TrimSpace(s), ":")
	sp := Spec{Kind: Kind(kind)}
	switch sp.Kind {
	case Random, "":
		if hasArg {
			return Spec{}, fmt.Errorf("%q: random takes no argument (its lengths are --input-tokens and --output-tokens)", s)
		}
		sp.Kind = Random
	case SharedPrefix:
		for _, kv := range strings.Split(arg, ",") {
			k, v, _ := strings.Cut(strings.TrimSpace(kv), "=")
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n < 1 || n > maxPrefix {
				return Spec{}, fmt.Errorf("%q: %q is not NAME=N with N from 1 to %d; write shared-prefix:groups=G,prefix=P (the suffix's length is --input-tokens)", s, kv, maxPrefix)
			}
			switch strings.TrimSpace(k) {
			case "groups":
				sp.Groups = n
			case "prefix":
				sp.PrefixTokens = n
			default:
				return Spec{}, fmt.Errorf("%q: unknown %q; write shared-prefix:groups=G,prefix=P (the suffix's length is --input-tokens)", s, k)
			}
		}
		if sp.Groups == 0 || sp.PrefixTokens == 0 {
			return Spec{}, fmt.Errorf("%q: write shared-prefix:groups=G,prefix=P, both (the suffix's length is --input-tokens)", s)
		}
	case JSONL, ShareGPT, Azure:
		if strings.TrimSpace(arg) == "" {
			return Spec{}, fmt.Errorf("%q: %s needs its file: %s:FILE", s, kind, kind)
		}
		sp.Path = arg
	default:
		return Spec{}, fmt.Errorf("%q: unknown dataset; %s", s, specHelp)
	}
	return sp, nil
}

// String is the spec as ParseSpec reads it.
func (s Spec) String() string {
	switch s.Kind {
	case SharedPrefix:
		return fmt.Sprintf("shared-prefix:groups=%d,prefix=%d", s.Groups, s.PrefixTokens)
	case JSONL, ShareGPT, Azure:
		return string(s.Kind) + ":" + s.Path
	}
	return string(Random)
}

// File is whether the kind reads a file.
func (s Spec) File() bool { return s.Path != "" }

// Options are how a dataset's records are taken and counted.
type Options struct {
	// Order is how requests take records (files other than traces,
	// which are always replayed in order).
	Order Order
	// Seed seeds the order and the shared-prefix groups.
	Seed uint64
	// Speedup divides a trace's times (2: twice as fast); 0 is 1.
	Speedup float64
	// Counter counts a record's tokens; nil counts words.
	Counter Counter
}

// Record is what one request asks, as a dataset has it.
type Record struct {
	// Prompt is the prompt as the contents of a JSON string, escaped as
	// in the file (no quotes): a completion's prompt, or a chat's one
	// user message. Nil for chats and traces.
	Prompt []byte
	// Messages is a chat's messages: a JSON array as in the file.
	Messages []byte
	// Input is the prompt's tokens: counted, or a trace's context tokens.
	Input int
	// Output is the output length asked for; 0 when the record has none.
	Output int
	// At is when a trace's request arrives, from its first, sped up.
	At time.Duration
}

// Dataset is an opened dataset.
type Dataset struct {
	Spec
	// Records is how many records requests take from; Skipped how many
	// the file held that have no prompt (ShareGPT conversations without a
	// human turn and its reply).
	Records, Skipped int
	// Chat is whether some record is a chat (messages).
	Chat bool

	o     Options
	f     *file
	first int64  // the trace's first timestamp, ns
	cols  [3]int // the trace's columns: TIMESTAMP, ContextTokens, GeneratedTokens
}

// Open opens and indexes s's file, if it has one, checking every record:
// its error names the file and the line or element that is wrong.
func Open(s Spec, o Options) (*Dataset, error) {
	if o.Counter == nil {
		o.Counter = Words{}
	}
	if o.Speedup <= 0 {
		o.Speedup = 1
	}
	d := &Dataset{Spec: s, o: o}
	if !s.File() {
		return d, nil
	}
	f, err := openFile(s.Path)
	if err != nil {
		return nil, err
	}
	d.f = f
	switch s.Kind {
	case JSONL:
		err = d.indexJSONL()
	case ShareGPT:
		err = d.indexShareGPT()
	case Azure:
		err = d.indexAzure()
	}
	if err == nil && len(f.off) == 0 {
		err = fmt.Errorf("%s holds no usable record", s.Path)
	}
	if err != nil {
		f.close()
		return nil, err
	}
	if cap(f.off) > len(f.off)+len(f.off)/32 {
		f.off = append([]uint64(nil), f.off...) // the index, 8 bytes a record, without append's spare capacity
	}
	d.Records = len(f.off)
	return d, nil
}

// Close unmaps the file; no Reader may read after it.
func (d *Dataset) Close() {
	if d.f != nil {
		d.f.close()
	}
}

// Index is the number of the record request hit takes.
func (d *Dataset) Index(hit uint64) uint64 {
	if d.Kind == Azure {
		return hit % uint64(d.Records)
	}
	return pick(d.o.Order, hit, uint64(d.Records), d.o.Seed)
}

// Group is the shared-prefix group of request hit, drawn from its number.
func (d *Dataset) Group(hit uint64) int {
	return int(mix(hit, d.o.Seed^0x67726f7570) % uint64(max(d.Groups, 1)))
}

// Pace implements schedule.Pacer for a trace: request hit arrives at its
// record's time; the schedule ends with the trace.
func (d *Dataset) Pace(hit uint64) (time.Duration, bool) {
	if hit >= uint64(d.Records) {
		return 0, true
	}
	var r Record
	d.azure(d.f.lineAt(d.f.off[hit]), &r)
	return r.At, false
}

// Trace is the record of a trace's request hit (its lengths and time).
func (d *Dataset) Trace(hit uint64) Record {
	var r Record
	d.azure(d.f.lineAt(d.f.off[hit%uint64(d.Records)]), &r)
	return r
}

// Reader reads records for one worker: its buffer holds a record's
// unescaped text while it is counted.
type Reader struct {
	d     *Dataset
	text  []byte
	turns []Turn
}

// NewReader returns a worker's reader.
func (d *Dataset) NewReader() *Reader { return &Reader{d: d} }

// Read fills r with the record request hit takes (a file's kinds).
func (rd *Reader) Read(hit uint64, r *Record) {
	d := rd.d
	*r = Record{}
	off := d.f.off[d.Index(hit)]
	switch d.Kind {
	case JSONL:
		d.jsonl(d.f.lineAt(off), r)
		r.Input = rd.count(r)
	case ShareGPT:
		reply, _ := d.sharegpt(d.f.data, int(off), r)
		r.Input = rd.count(r)
		rd.text = unescape(rd.text[:0], reply)
		r.Output = max(d.o.Counter.Count(rd.text), 1)
	case Azure:
		d.azure(d.f.lineAt(off), r)
	}
}

// count counts r's prompt's tokens: its prompt, or the text of its
// messages' contents.
func (rd *Reader) count(r *Record) int {
	if r.Messages == nil {
		rd.text = unescape(rd.text[:0], r.Prompt)
		return rd.d.o.Counter.Count(rd.text)
	}
	rd.text = appendTexts(rd.text[:0], r.Messages)
	return rd.d.o.Counter.Count(rd.text)
}
