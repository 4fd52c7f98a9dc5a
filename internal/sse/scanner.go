// Package sse scans a server-sent-events stream (the WHATWG HTML
// standard's text/event-stream) into events, incrementally and without
// allocating: bytes are fed as they arrive, split anywhere (a byte at a
// time, mid-line, mid-CRLF), and each event is handed back the moment the
// blank line that ends it is seen.
//
// It is written here rather than taken from a library because load
// generation needs what the SSE client libraries do not give: no goroutine
// or io.Reader per stream, no allocation per event, a bound on an event's
// size that a hostile server cannot lift, and a way to tell that a stream
// ended in the middle of an event.
package sse

import "bytes"

// DefaultMaxData bounds an event's data when Scanner.MaxData is 0.
const DefaultMaxData = 1 << 20

// maxType is the longest event type kept; a longer one matches no name.
const maxType = 32

// Event is one dispatched event. Its slices belong to the Scanner and are
// valid until the next call to Next or Reset.
type Event struct {
	// Type is the event's type: the value of its last "event" field, empty
	// when it had none (the standard's "message").
	Type []byte
	// Data is the event's data: its "data" fields' values joined by LF.
	Data []byte
	// Oversized reports that the data exceeded the Scanner's MaxData: Data
	// holds only its first MaxData bytes.
	Oversized bool

	longType bool // Type holds only the first maxType bytes of a longer one
}

// IsType reports whether the event's type is name.
func (e *Event) IsType(name string) bool { return !e.longType && string(e.Type) == name }

// state is where the scanner is in the current line.
type state uint8

const (
	stLine    state = iota // at the start of a line
	stName                 // in a field's name
	stSpace                // just after the colon: one space is dropped
	stValue                // in a field's value
	stComment              // in a comment line (":..."), skipped
)

// field is what a line's field name means.
type field uint8

const (
	fieldOther field = iota // id, retry and unknown names: ignored
	fieldData
	fieldEvent
)

// Scanner splits a byte stream into events. The zero Scanner is ready; use
// one per stream and Reset it before the next.
type Scanner struct {
	// MaxData bounds an event's data bytes (DefaultMaxData when 0); an
	// event that exceeds it is still delimited and dispatched, marked
	// Oversized, so memory stays bounded whatever the server sends.
	MaxData int

	st     state
	skipLF bool // the last line ended with CR: an LF right after belongs to it
	first  bool // past the stream's first line (a byte order mark may start it)
	name   [8]byte
	nname  int // length of the field name (may exceed len(name))
	kind   field
	lines  int // data lines of the current event
	typ    [maxType]byte
	ntyp   int // length of the type (may exceed maxType)
	data   []byte
	over   bool
	ev     Event
}

// Reset prepares s for a new stream, keeping its data buffer's memory.
func (s *Scanner) Reset() {
	s.st, s.skipLF, s.first, s.nname, s.kind = stLine, false, false, 0, fieldOther
	s.clear()
}

// clear forgets the current event's fields.
func (s *Scanner) clear() {
	s.lines, s.ntyp, s.data, s.over = 0, 0, s.data[:0], false
}

// Pending reports whether s holds part of an event: a line not yet ended,
// or fields not yet dispatched by a blank line. A stream that ends so ended
// in the middle of an event, which the standard says to discard.
func (s *Scanner) Pending() bool {
	if s.st == stName && !s.first && s.nname == 3 && string(s.name[:3]) == bom {
		return false // only the byte order mark so far
	}
	return s.st != stLine || s.lines > 0 || s.ntyp > 0
}

// bom is the UTF-8 byte order mark, which a stream may start with.
const bom = "\xef\xbb\xbf"

// Next scans b until it completes an event or runs out. It returns how
// many bytes it consumed and whether they completed an event, which Event
// then holds. Bytes not consumed (after an event) are the caller's to feed
// again; Next keeps what it needs of a partial line itself, so the caller
// never buffers.
func (s *Scanner) Next(b []byte) (n int, ok bool) {
	i := 0
	for i < len(b) {
		if s.skipLF {
			s.skipLF = false
			if b[i] == '\n' {
				i++
				continue
			}
		}
		switch s.st {
		case stLine:
			switch c := b[i]; c {
			case '\n', '\r':
				i++
				s.skipLF = c == '\r'
				s.first = true
				if s.dispatch() {
					return i, true
				}
			case ':':
				i++
				s.st = stComment
			default:
				s.st, s.nname = stName, 0
			}
		case stName:
			for i < len(b) {
				c := b[i]
				if c == ':' || c == '\n' || c == '\r' {
					break
				}
				if s.nname < len(s.name) {
					s.name[s.nname] = c
				}
				s.nname++
				i++
			}
			if i == len(b) {
				break
			}
			s.startField()
			if b[i] == ':' {
				i++
				s.st = stSpace
				continue
			}
			s.endLine(b[i])
			i++
		case stSpace:
			if b[i] == ' ' {
				i++
			}
			s.st = stValue
		case stValue, stComment:
			rest := b[i:]
			e := eol(rest)
			if e < 0 {
				s.value(rest)
				i = len(b)
				break
			}
			s.value(rest[:e])
			s.endLine(rest[e])
			i += e + 1
		}
	}
	return i, false
}

// eol returns the index of the first CR or LF in b, or -1.
func eol(b []byte) int {
	lf := bytes.IndexByte(b, '\n')
	head := b
	if lf >= 0 {
		head = b[:lf]
	}
	if cr := bytes.IndexByte(head, '\r'); cr >= 0 {
		return cr
	}
	return lf
}

// endLine ends the current line at its terminator c.
func (s *Scanner) endLine(c byte) {
	s.skipLF = c == '\r'
	s.st = stLine
	s.first = true
}

// startField classifies the field whose name was just read and starts its
// value.
func (s *Scanner) startField() {
	name := s.name[:min(s.nname, len(s.name))]
	if !s.first && s.nname >= 3 && string(name[:3]) == bom {
		name, s.nname = name[3:], s.nname-3
	}
	s.kind = fieldOther
	switch {
	case s.nname == 4 && string(name) == "data":
		s.kind = fieldData
		if s.lines > 0 {
			s.appendData([]byte{'\n'})
		}
		s.lines++
	case s.nname == 5 && string(name) == "event":
		s.kind = fieldEvent
		s.ntyp = 0
	}
}

// value takes bytes of the current field's value.
func (s *Scanner) value(v []byte) {
	if s.st == stComment {
		return
	}
	switch s.kind {
	case fieldData:
		s.appendData(v)
	case fieldEvent:
		if room := maxType - s.ntyp; room > 0 {
			copy(s.typ[s.ntyp:], v[:min(len(v), room)])
		}
		s.ntyp += len(v)
	}
}

// appendData appends v to the event's data, up to MaxData.
func (s *Scanner) appendData(v []byte) {
	limit := s.MaxData
	if limit <= 0 {
		limit = DefaultMaxData
	}
	room := limit - len(s.data)
	if len(v) > room {
		v = v[:max(room, 0)]
		s.over = true
	}
	s.data = append(s.data, v...)
}

// dispatch ends the event at a blank line: it reports whether there is one
// to hand out (an event without data lines is not dispatched).
func (s *Scanner) dispatch() bool {
	if s.lines == 0 {
		s.clear()
		return false
	}
	s.ev = Event{Type: s.typ[:min(s.ntyp, maxType)], Data: s.data, Oversized: s.over, longType: s.ntyp > maxType}
	s.lines, s.ntyp, s.over = 0, 0, false
	s.data = s.data[:0] // the event keeps its bytes until the next call
	return true
}

// Event returns the event the last Next completed.
func (s *Scanner) Event() *Event { return &s.ev }
