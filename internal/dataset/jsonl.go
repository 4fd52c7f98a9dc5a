package dataset

import (
	"errors"
	"fmt"
)

// A JSON Lines dataset holds one request per line:
//
//	{"prompt": "Explain TCP slow start.", "output_tokens": 200}
//	{"messages": [{"role": "system", "content": "…"}, {"role": "user", "content": "…"}]}
//
// "prompt" is a completion's prompt (for the chat API, one user message);
// "messages" is a chat's messages, sent as they are (chat API only): each
// an object with a "role" and a "content" — a string, or a list of parts
// whose "text" parts count as its text. "output_tokens" (or
// "max_tokens") is the output length asked for; without it, the length is
// drawn from --output-tokens. Other members are ignored; blank lines are
// skipped.

// jsonlHelp is what a line must be.
const jsonlHelp = `each line must be one JSON object with "prompt" (a string) or "messages" (a list of {"role","content"}), and optionally "output_tokens"`

// indexJSONL checks and indexes every line.
func (d *Dataset) indexJSONL() error {
	f := d.f
	var r Record
	return f.lines(func(line, start, end int) error {
		if err := d.jsonl(f.data[start:end], &r); err != nil {
			return fmt.Errorf("%s line %d: %v; %s", d.Path, line, err, jsonlHelp)
		}
		d.Chat = d.Chat || r.Messages != nil
		f.off = append(f.off, uint64(start))
		return nil
	})
}

// maxOutput bounds an output length read from a dataset.
const maxOutput = 1 << 20

// jsonl reads the request on line b.
func (d *Dataset) jsonl(b []byte, r *Record) error {
	*r = Record{}
	o, ok := openObject(b, 0)
	if !ok {
		return errors.New("not a JSON object")
	}
	for {
		key, v0, v1, ok := o.next()
		if !ok {
			break
		}
		switch string(key) {
		case "prompt":
			if b[v0] != '"' {
				return errors.New(`"prompt" is not a string`)
			}
			if v1-v0 == 2 {
				return errors.New(`"prompt" is empty`)
			}
			r.Prompt = b[v0+1 : v1-1]
		case "messages":
			if err := checkMessages(b[v0:v1]); err != nil {
				return err
			}
			r.Messages = b[v0:v1]
		case "output_tokens", "max_tokens":
			n, ok := integer(b, v0, v1, maxOutput)
			if !ok || n < 1 {
				return fmt.Errorf("%q is not a whole number from 1", key)
			}
			r.Output = n
		}
	}
	switch {
	case o.bad || ws(b, o.i) != len(b):
		return errors.New("not one valid JSON object")
	case r.Prompt == nil && r.Messages == nil:
		return errors.New(`no "prompt" and no "messages"`)
	case r.Prompt != nil && r.Messages != nil:
		return errors.New(`both "prompt" and "messages"`)
	}
	return nil
}

// checkMessages checks a chat's messages: a non-empty list of objects,
// each with a string "role" and a "content" that is a string or a list.
func checkMessages(b []byte) error {
	a, ok := openArray(b, 0)
	if !ok {
		return errors.New(`"messages" is not a list`)
	}
	n := 0
	for {
		v0, v1, ok := a.next()
		if !ok {
			break
		}
		n++
		o, ok := openObject(b[:v1], v0)
		if !ok {
			return fmt.Errorf("message %d is not an object", n)
		}
		role, content := false, false
		for {
			key, k0, _, ok := o.next()
			if !ok {
				break
			}
			switch string(key) {
			case "role":
				role = b[k0] == '"'
			case "content":
				content = b[k0] == '"' || b[k0] == '['
			}
		}
		if !role || !content {
			return fmt.Errorf(`message %d needs a "role" string and a "content" (a string or a list of parts)`, n)
		}
	}
	if a.bad || n == 0 {
		return errors.New(`"messages" is not a non-empty list`)
	}
	return nil
}

// appendTexts appends the text of every message's content to dst, a
// newline after each: a string content, or the "text" of each part of a
// list.
func appendTexts(dst, b []byte) []byte {
	a, _ := openArray(b, 0)
	for {
		v0, v1, ok := a.next()
		if !ok {
			return dst
		}
		o, _ := openObject(b[:v1], v0)
		for {
			key, k0, k1, ok := o.next()
			if !ok {
				break
			}
			if string(key) != "content" {
				continue
			}
			if b[k0] == '"' {
				dst = append(unescape(dst, b[k0+1:k1-1]), '\n')
				continue
			}
			parts, _ := openArray(b[:k1], k0)
			for {
				p0, p1, ok := parts.next()
				if !ok {
					break
				}
				po, ok := openObject(b[:p1], p0)
				if !ok {
					continue
				}
				for {
					pk, t0, t1, ok := po.next()
					if !ok {
						break
					}
					if string(pk) == "text" && b[t0] == '"' {
						dst = append(unescape(dst, b[t0+1:t1-1]), '\n')
					}
				}
			}
		}
	}
}
