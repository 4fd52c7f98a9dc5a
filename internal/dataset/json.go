package dataset

import "github.com/hail-loadgen/hail/internal/jsonstr"

// A small JSON scanner over a record's bytes: it finds values without
// decoding them, so a record's prompt is copied into a request as the JSON
// string it already is (no unescape, no allocation). It accepts exactly
// RFC 8259's grammar, nesting at most maxDepth deep.

// maxDepth bounds the nesting of a record's JSON.
const maxDepth = 64

// ws skips JSON whitespace from i.
func ws(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// str scans the string at b[i] (its opening quote) and returns the index
// after its closing quote, or -1 when it is not a valid JSON string.
func str(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	for i++; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i + 1
		case c < 0x20:
			return -1
		case c == '\\':
			i++
			if i >= len(b) {
				return -1
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) || !hex(b[i+1]) || !hex(b[i+2]) || !hex(b[i+3]) || !hex(b[i+4]) {
					return -1
				}
				i += 4
			default:
				return -1
			}
		}
	}
	return -1
}

func hex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func digit(c byte) bool { return c >= '0' && c <= '9' }

// value scans the value at b[i] (no whitespace before it) and returns the
// index after it, or -1 when it is not a valid JSON value.
func value(b []byte, i int) int {
	// open[d] is the bracket opened at depth d; after[d] whether a value
	// has been read in that container.
	var open [maxDepth]byte
	depth := 0
	for {
		if i >= len(b) {
			return -1
		}
		// A value.
		switch c := b[i]; c {
		case '"':
			i = str(b, i)
		case '{', '[':
			if depth == maxDepth {
				return -1
			}
			open[depth] = c
			depth++
			i = ws(b, i+1)
			if i < len(b) && (c == '{' && b[i] == '}' || c == '[' && b[i] == ']') {
				depth--
				i++
				break
			}
			if c == '{' {
				if i = str(b, i); i < 0 {
					return -1
				}
				if i = ws(b, i); i >= len(b) || b[i] != ':' {
					return -1
				}
				i = ws(b, i+1)
			}
			continue
		case 't':
			i = lit(b, i, "true")
		case 'f':
			i = lit(b, i, "false")
		case 'n':
			i = lit(b, i, "null")
		default:
			i = jsonstr.Number(b, i)
		}
		if i < 0 {
			return -1
		}
		// After a value: close containers, or the next member.
		for {
			if depth == 0 {
				return i
			}
			i = ws(b, i)
			if i >= len(b) {
				return -1
			}
			c := b[i]
			if c == ',' {
				i = ws(b, i+1)
				if open[depth-1] == '{' {
					if i = str(b, i); i < 0 {
						return -1
					}
					if i = ws(b, i); i >= len(b) || b[i] != ':' {
						return -1
					}
					i = ws(b, i+1)
				}
				break
			}
			if open[depth-1] == '{' && c == '}' || open[depth-1] == '[' && c == ']' {
				depth--
				i++
				continue
			}
			return -1
		}
	}
}

// lit scans the literal word at b[i].
func lit(b []byte, i int, word string) int {
	if len(b)-i < len(word) || string(b[i:i+len(word)]) != word {
		return -1
	}
	return i + len(word)
}

// list walks the items of a JSON object or array, up to its closing byte
// end: item steps over the comma between two items.
type list struct {
	b     []byte
	i     int
	end   byte
	first bool
	bad   bool
}

// openList starts walking the object or array whose opening byte, start,
// is at b[i] (whitespace before it allowed); ok is false when it is not
// there.
func openList(b []byte, i int, start, end byte) (list, bool) {
	i = ws(b, i)
	if i >= len(b) || b[i] != start {
		return list{}, false
	}
	return list{b: b, i: i + 1, end: end, first: true}, true
}

// item returns where the next item starts; ok is false at the closing byte
// (then consumed) or on bad JSON (then l.bad is set).
func (l *list) item() (at int, ok bool) {
	b := l.b
	i := ws(b, l.i)
	if i < len(b) && b[i] == l.end {
		l.i = i + 1
		return 0, false
	}
	if !l.first {
		if i >= len(b) || b[i] != ',' {
			l.bad = true
			return 0, false
		}
		i = ws(b, i+1)
	}
	l.first = false
	return i, true
}

// object walks the members of the JSON object at b[i]: next returns each
// member's key (as written, without quotes) and value's bounds.
type object struct{ list }

// openObject starts walking the object at b[i] (whitespace before it
// allowed); ok is false when there is no object there.
func openObject(b []byte, i int) (object, bool) {
	l, ok := openList(b, i, '{', '}')
	return object{l}, ok
}

// next returns the next member; ok is false at the end of the object or on
// bad JSON (then o.bad is set).
func (o *object) next() (key []byte, v0, v1 int, ok bool) {
	b := o.b
	k0, ok := o.item()
	if !ok {
		return nil, 0, 0, false
	}
	i := str(b, k0)
	if i < 0 {
		o.bad = true
		return nil, 0, 0, false
	}
	key = b[k0+1 : i-1]
	if i = ws(b, i); i >= len(b) || b[i] != ':' {
		o.bad = true
		return nil, 0, 0, false
	}
	v0 = ws(b, i+1)
	if v1 = value(b, v0); v1 < 0 {
		o.bad = true
		return nil, 0, 0, false
	}
	o.i = v1
	return key, v0, v1, true
}

// array walks the elements of the JSON array at b[i].
type array struct{ list }

// openArray starts walking the array at b[i] (whitespace before it
// allowed).
func openArray(b []byte, i int) (array, bool) {
	l, ok := openList(b, i, '[', ']')
	return array{l}, ok
}

// next returns the next element's bounds; ok is false at the end of the
// array or on bad JSON (then a.bad is set).
func (a *array) next() (v0, v1 int, ok bool) {
	v0, ok = a.item()
	if !ok {
		return 0, 0, false
	}
	if v1 = value(a.b, v0); v1 < 0 {
		a.bad = true
		return 0, 0, false
	}
	a.i = v1
	return v0, v1, true
}

// unescape appends the text of the JSON string contents s (valid, as str
// accepted them) to dst.
func unescape(dst, s []byte) []byte {
	dst, _ = jsonstr.Append(dst, s)
	return dst
}

// integer reads the non-negative integer at b[v0:v1] (a JSON number
// without fraction or exponent), capped at max; ok is false otherwise.
func integer(b []byte, v0, v1, max int) (int, bool) {
	if v0 >= v1 || b[v0] == '-' {
		return 0, false
	}
	n := 0
	for _, c := range b[v0:v1] {
		if !digit(c) {
			return 0, false
		}
		n = min(n*10+int(c-'0'), max)
	}
	return n, true
}
