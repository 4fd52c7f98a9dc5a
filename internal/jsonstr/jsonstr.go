// Package jsonstr unescapes the body of a JSON string (the bytes between
// its quotes) as encoding/json reads it, appending to a caller's buffer
// without reflection or allocation of its own, and scans a JSON number's
// extent. It is the one unescaper and number scanner of the packages that
// scan JSON bytes themselves on a hot or bulk path (internal/dataset's
// readers, internal/grpccall's encoder, internal/scenario/jsonpath);
// encoding/json offers no function that unescapes a string body alone or
// says where a number ends.
package jsonstr

import (
	"unicode/utf16"
	"unicode/utf8"
)

// Append appends raw, a JSON string's body, to dst unescaped as
// encoding/json reads it: \" \\ \/ \b \f \n \r \t and \uXXXX escapes, a
// surrogate pair as its one rune, a lone surrogate as U+FFFD. Other bytes
// are copied as they are (invalid UTF-8 too). ok is false for a backslash
// that starts no JSON escape; dst then holds what came before it.
func Append(dst, raw []byte) (out []byte, ok bool) { return appendBody(dst, raw, false) }

// AppendStrict is Append refusing (ok false) a lone surrogate escape, as
// protojson does, where encoding/json reads U+FFFD.
func AppendStrict(dst, raw []byte) (out []byte, ok bool) { return appendBody(dst, raw, true) }

func appendBody(dst, raw []byte, strict bool) ([]byte, bool) {
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' {
			dst = append(dst, c)
			continue
		}
		i++
		if i >= len(raw) {
			return dst, false
		}
		switch raw[i] {
		case '"', '\\', '/':
			dst = append(dst, raw[i])
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, ok := hex4(raw, i+1)
			if !ok {
				return dst, false
			}
			i += 4
			if utf16.IsSurrogate(r) {
				if r2, ok := hex4(raw, i+3); ok && raw[i+1] == '\\' && raw[i+2] == 'u' {
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						r = d
						i += 6
					}
				}
				if strict && utf16.IsSurrogate(r) {
					return dst, false
				}
			}
			dst = utf8.AppendRune(dst, r) // a lone surrogate: U+FFFD
		default:
			return dst, false
		}
	}
	return dst, true
}

// hex4 reads the four hexadecimal digits at b[i:] (false when there are
// not four).
func hex4(b []byte, i int) (rune, bool) {
	if i < 0 || i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// Number scans the JSON number that starts at b[i] —
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? — and returns the index
// just after it, or -1 when none starts there. It stops at the first byte
// that cannot continue the number: the caller judges what follows.
func Number(b []byte, i int) int {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && digit(b[i]):
		i = digits(b, i)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		if i+1 >= len(b) || !digit(b[i+1]) {
			return -1
		}
		i = digits(b, i+1)
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !digit(b[i]) {
			return -1
		}
		i = digits(b, i)
	}
	return i
}

// digits returns the index after the run of decimal digits at b[i].
func digits(b []byte, i int) int {
	for i < len(b) && digit(b[i]) {
		i++
	}
	return i
}

func digit(c byte) bool { return c >= '0' && c <= '9' }
