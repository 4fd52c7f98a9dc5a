package dataset

import (
	"errors"
	"fmt"
)

// A ShareGPT dataset is the layout of ShareGPT_V3_unfiltered_cleaned_split.json
// (what vLLM's and SGLang's benchmarks read): one JSON array of
// conversations,
//
//	[{"id": "…", "conversations": [{"from": "human", "value": "…"}, {"from": "gpt", "value": "…"}, …]}, …]
//
// A request's prompt is a conversation's first human turn ("from" human or
// user), and its output length is the length of the turn after it (the
// reply), counted with the dataset's Counter. Conversations without such a
// pair, or with an empty prompt, are skipped (and counted).

// sharegptHelp is what the file must be.
const sharegptHelp = `a ShareGPT file is one JSON array of {"conversations": [{"from": "human", "value": "…"}, {"from": "gpt", "value": "…"}, …]}`

// errNoPair marks a conversation without a human turn and its reply.
var errNoPair = errors.New("no human turn with a reply")

// indexShareGPT checks the file and indexes every usable conversation.
func (d *Dataset) indexShareGPT() error {
	f := d.f
	b := f.data
	a, ok := openArray(b, 0)
	if !ok {
		return fmt.Errorf("%s is not a JSON array; %s", d.Path, sharegptHelp)
	}
	var r Record
	released, n := 0, 0
	for {
		v0, v1, ok := a.next()
		if !ok {
			break
		}
		n++
		_, err := d.sharegpt(b[:v1], v0, &r)
		switch {
		case err == errNoPair:
			d.Skipped++
		case err != nil:
			return fmt.Errorf("%s: conversation %d (byte %d): %v; %s", d.Path, n, v0, err, sharegptHelp)
		default:
			f.off = append(f.off, uint64(v0))
		}
		if v1-released >= releaseEvery && f.mapped {
			release(b[released:v1:v1])
			released = v1 &^ (pageSize - 1)
		}
	}
	if a.bad || ws(b, a.i) != len(b) {
		return fmt.Errorf("%s: bad JSON after conversation %d (byte %d); %s", d.Path, n, a.i, sharegptHelp)
	}
	return nil
}

// sharegpt reads the conversation at b[at]: its first human turn as r's
// prompt; reply is the contents of the turn after it.
func (d *Dataset) sharegpt(b []byte, at int, r *Record) (reply []byte, err error) {
	*r = Record{}
	end := value(b, at)
	if end < 0 {
		return nil, errors.New("not valid JSON")
	}
	b = b[:end]
	o, ok := openObject(b, at)
	if !ok {
		return nil, errors.New("not an object")
	}
	found := false
	for {
		key, v0, v1, ok := o.next()
		if !ok {
			break
		}
		if string(key) != "conversations" && string(key) != "conversation" {
			continue
		}
		found = true
		turns, ok := openArray(b[:v1], v0)
		if !ok {
			return nil, errors.New(`"conversations" is not a list`)
		}
		n := 0
		for {
			t0, t1, ok := turns.next()
			if !ok {
				break
			}
			n++
			from, text, err := turn(b[:t1], t0)
			if err != nil {
				return nil, fmt.Errorf("turn %d: %v", n, err)
			}
			switch {
			case r.Prompt != nil && reply == nil:
				reply = text
			case r.Prompt == nil && (string(from) == "human" || string(from) == "user") && len(text) > 0:
				r.Prompt = text
			}
		}
	}
	switch {
	case !found:
		return nil, errors.New(`no "conversations"`)
	case r.Prompt == nil || reply == nil:
		return nil, errNoPair
	}
	return reply, nil
}

// turn reads a turn's "from" and "value" contents.
func turn(b []byte, at int) (from, text []byte, err error) {
	o, ok := openObject(b, at)
	if !ok {
		return nil, nil, errors.New("not an object")
	}
	for {
		key, v0, v1, ok := o.next()
		if !ok {
			break
		}
		switch string(key) {
		case "from":
			if b[v0] == '"' {
				from = b[v0+1 : v1-1]
			}
		case "value":
			if b[v0] == '"' {
				text = b[v0+1 : v1-1]
			}
		}
	}
	if from == nil || text == nil {
		return nil, nil, errors.New(`a turn needs "from" and "value" strings`)
	}
	return from, text, nil
}

// Turn is one turn of a ShareGPT conversation: its text as the contents
// of a JSON string (escaped, as in the file), and whether a human wrote
// it.
type Turn struct {
	Text  []byte
	Human bool
}

// Turns returns the turns of the conversation session g takes (its
// record Index(g)), from its first human turn on; the slice is the
// reader's, valid until its next call.
func (rd *Reader) Turns(g uint64) []Turn {
	d := rd.d
	b := d.f.data
	at := int(d.f.off[d.Index(g)])
	rd.turns = rd.turns[:0]
	end := value(b, at)
	o, _ := openObject(b[:end], at)
	for {
		key, v0, v1, ok := o.next()
		if !ok {
			break
		}
		if string(key) != "conversations" && string(key) != "conversation" {
			continue
		}
		turns, _ := openArray(b[:v1], v0)
		for {
			t0, t1, ok := turns.next()
			if !ok {
				break
			}
			from, text, err := turn(b[:t1], t0)
			if err != nil {
				continue
			}
			human := string(from) == "human" || string(from) == "user"
			if len(rd.turns) == 0 && (!human || len(text) == 0) {
				continue
			}
			rd.turns = append(rd.turns, Turn{Text: text, Human: human})
		}
	}
	return rd.turns
}

// Count counts the tokens of a JSON string's contents (escaped), with
// the dataset's Counter.
func (rd *Reader) Count(escaped []byte) int {
	rd.text = unescape(rd.text[:0], escaped)
	return rd.d.o.Counter.Count(rd.text)
}
