// Package llmchunk picks, from the data of one server-sent event of an
// OpenAI-compatible streaming response (/v1/completions,
// /v1/chat/completions), the few fields a load generator needs: whether the
// chunk carries generated text, the server's token counts, an error, the
// [DONE] terminator.
//
// It scans bytes instead of decoding JSON: decoding every event into maps
// or structs costs microseconds and allocations per token (the clients
// inference benchmarks use spend most of their CPU there), while the fields
// needed sit at known places. The scanner walks the top-level object and
// skips every value it does not need without looking inside (strings by
// their quotes, objects and arrays by their brackets). It never fails:
// malformed data yields what could be read, and Object reports whether the
// data was a JSON object at all.
package llmchunk

import (
	"encoding/binary"
	"math/bits"
)

// Fields are what one event's data says.
type Fields struct {
	// Done is set for the stream's terminator, the data "[DONE]".
	Done bool
	// Object is set when the data is a JSON object.
	Object bool
	// Choices is set when "choices" holds at least one element.
	Choices bool
	// Content is set when choices[0] carries generated text: a non-empty
	// "text" (completions) or "delta" "content" (chat), or a reasoning
	// model's non-empty "reasoning_content" or "reasoning".
	Content bool
	// Error is set when the object has an "error" member that is not null,
	// or is itself an error ("object": "error").
	Error bool
	// Completion and Prompt are "usage"'s completion_tokens and
	// prompt_tokens; -1 when absent (no usage, or usage null).
	Completion, Prompt int64
}

// Pick reads data, the data of one event.
func Pick(data []byte) Fields {
	f := Fields{Completion: -1, Prompt: -1}
	c := cursor{b: data}
	c.ws()
	if c.lit("[DONE]") {
		c.ws()
		f.Done = c.i == len(c.b)
		return f
	}
	if !c.at('{') {
		return f
	}
	f.Object = true
	var errMember, errObject bool
	c.members(func(key []byte) {
		switch string(key) {
		case "choices":
			c.choices(&f)
		case "usage":
			c.usage(&f)
		case "error":
			errMember = !c.lit("null")
			if errMember {
				c.skip()
			}
		case "object":
			s, ok := c.str()
			errObject = ok && string(s) == "error"
		default:
			c.skip()
		}
	})
	f.Error = errMember || errObject
	return f
}

// cursor is a position in the data.
type cursor struct {
	b []byte
	i int
}

// ws skips JSON whitespace.
func (c *cursor) ws() {
	for c.i < len(c.b) && c.b[c.i] <= ' ' { // most often none: one test
		switch c.b[c.i] {
		case ' ', '\t', '\n', '\r':
			c.i++
		default:
			return
		}
	}
}

// at consumes ch if it is the next byte (after whitespace).
func (c *cursor) at(ch byte) bool {
	c.ws()
	if c.i < len(c.b) && c.b[c.i] == ch {
		c.i++
		return true
	}
	return false
}

// lit consumes s if the data continues with it.
func (c *cursor) lit(s string) bool {
	if len(c.b)-c.i >= len(s) && string(c.b[c.i:c.i+len(s)]) == s {
		c.i += len(s)
		return true
	}
	return false
}

// str consumes a string and returns its raw bytes (escapes not decoded);
// ok is false, and nothing is consumed, if the next value is not a string.
func (c *cursor) str() (s []byte, ok bool) {
	if !c.at('"') {
		return nil, false
	}
	b, start := c.b, c.i
	for i := start; i < len(b); {
		if len(b)-i >= 8 { // eight bytes at a time up to the first quote or backslash
			m := special(binary.LittleEndian.Uint64(b[i:]))
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) / 8
		}
		switch b[i] {
		case '"':
			c.i = i + 1
			return b[start:i], true
		case '\\':
			i += 2 // the escaped byte, whatever it is
		default:
			i++
		}
	}
	c.i = len(b)
	return b[start:], true
}

// special marks the bytes of w (eight bytes read little-endian) that are a
// quote or a backslash: the high bit of each such byte is set. Bits above
// the lowest may be set for other bytes too (a borrow), so only the lowest
// is exact: the first such byte.
func special(w uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	q, e := w^('"'*ones), w^('\\'*ones) // a zero byte where w has a quote, a backslash
	return ((q-ones)&^q | (e-ones)&^e) & highs
}

// skip consumes one value of any kind; on malformed data it may consume
// the rest.
func (c *cursor) skip() {
	c.ws()
	if c.i >= len(c.b) {
		return
	}
	switch c.b[c.i] {
	case '"':
		c.str()
		return
	case '{', '[':
	default: // a number or a literal: up to the next delimiter
		for c.i < len(c.b) {
			switch c.b[c.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return
			}
			c.i++
		}
		return
	}
	depth := 0
	for c.i < len(c.b) {
		switch c.b[c.i] {
		case '"':
			c.str()
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				c.i++
				return
			}
		}
		c.i++
	}
}

// members calls member with each key of the object whose '{' was just
// consumed; member must consume the value. It stops at the closing '}' or
// where the data stops making sense.
func (c *cursor) members(member func(key []byte)) {
	if c.at('}') {
		return
	}
	for c.i < len(c.b) {
		key, ok := c.str()
		if !ok || !c.at(':') {
			c.i = len(c.b)
			return
		}
		c.ws()
		before := c.i
		member(key)
		if c.i == before { // a member that took nothing: step over its value
			c.skip()
		}
		if c.at(',') {
			continue
		}
		c.at('}')
		return
	}
}

// choices reads "choices": its first element, and skips the rest. A
// repeated key counts as its last occurrence, as JSON decoders read it.
func (c *cursor) choices(f *Fields) {
	f.Choices, f.Content = false, false
	if !c.at('[') {
		c.skip()
		return
	}
	if c.at(']') {
		return
	}
	f.Choices = true
	if c.at('{') {
		var text, delta bool
		c.members(func(key []byte) {
			switch string(key) {
			case "text":
				text = c.nonEmpty()
			case "delta":
				delta = c.delta()
			default:
				c.skip()
			}
		})
		f.Content = text || delta
	} else {
		c.skip()
	}
	for c.at(',') {
		c.skip()
	}
	c.at(']')
}

// delta reads a chat chunk's "delta" and reports whether it carries text.
func (c *cursor) delta() bool {
	if !c.at('{') {
		c.skip()
		return false
	}
	var content, reasoning, reasoningContent bool
	c.members(func(key []byte) {
		switch string(key) {
		case "content":
			content = c.nonEmpty()
		case "reasoning_content":
			reasoningContent = c.nonEmpty()
		case "reasoning":
			reasoning = c.nonEmpty()
		default:
			c.skip()
		}
	})
	return content || reasoning || reasoningContent
}

// nonEmpty consumes a value and reports whether it is a non-empty string.
func (c *cursor) nonEmpty() bool {
	s, ok := c.str()
	if !ok {
		c.skip()
	}
	return ok && len(s) > 0
}

// usage reads "usage": its token counts.
func (c *cursor) usage(f *Fields) {
	f.Completion, f.Prompt = -1, -1
	if !c.at('{') {
		c.skip()
		return
	}
	c.members(func(key []byte) {
		switch string(key) {
		case "completion_tokens":
			f.Completion = c.count()
		case "prompt_tokens":
			f.Prompt = c.count()
		default:
			c.skip()
		}
	})
}

// count consumes a non-negative integer; -1 if the value is not one.
func (c *cursor) count() int64 {
	c.ws()
	start := c.i
	var n int64
	for c.i < len(c.b) && '0' <= c.b[c.i] && c.b[c.i] <= '9' {
		if n < 1<<50 {
			n = n*10 + int64(c.b[c.i]-'0')
		}
		c.i++
	}
	if c.i == start {
		c.skip()
		return -1
	}
	if c.i < len(c.b) && (c.b[c.i] == '.' || c.b[c.i] == 'e' || c.b[c.i] == 'E') {
		c.skip() // not an integer
		return -1
	}
	return n
}
