// Package jsonpath finds one value in a JSON document by a path such as
// id, data.items.0.id or $.data.items[0].id (dots or brackets; a number
// is an array index, or an object key spelled so). A scenario's captures
// and checks read response bodies with it: Lookup scans the bytes in place,
// building nothing, and reads hostile bodies safely (FuzzLookup). It is
// written here because encoding/json decodes whole documents, and JSONPath
// libraries (RFC 9535) build trees: this subset is all scenarios use.
package jsonpath

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hail-loadgen/hail/internal/jsonstr"
)

// Path is a parsed JSON path: its steps, outermost first.
type Path []pathSeg

// pathSeg is one step of a JSON path: an object key, or an array index
// (a numeric segment also matches an object key spelled that way).
type pathSeg struct {
	key   string
	index int // -1: not a number
}

// Parse parses "id", "data.items.0.id", "$.data.items[0].id".
func Parse(s string) (Path, error) {
	p := strings.TrimPrefix(strings.TrimPrefix(s, "$"), ".")
	p = strings.ReplaceAll(strings.ReplaceAll(p, "[", "."), "]", "")
	p = strings.TrimPrefix(p, ".")
	if p == "" {
		return nil, fmt.Errorf("JSON path %q is empty: expected keys separated by dots, such as id or data.items.0.id", s)
	}
	var out Path
	for _, part := range strings.Split(p, ".") {
		if part == "" {
			return nil, fmt.Errorf("JSON path %q has an empty segment: expected keys separated by single dots, such as data.items.0.id", s)
		}
		idx := -1
		if n, err := strconv.Atoi(part); err == nil && n >= 0 {
			idx = n
		}
		out = append(out, pathSeg{key: part, index: idx})
	}
	return out, nil
}

// Lookup finds the value at path in the JSON document b. Strings are
// returned unescaped (into scratch when they hold escapes), numbers and
// booleans as written, objects and arrays as their JSON text; null and
// absent values are not found. It scans b without building anything.
func (path Path) Lookup(b []byte, scratch *[]byte) ([]byte, bool) {
	i := skipWS(b, 0)
	for _, seg := range path {
		if i >= len(b) {
			return nil, false
		}
		var ok bool
		switch b[i] {
		case '{':
			i, ok = jsonMember(b, i, seg.key)
		case '[':
			i, ok = jsonElement(b, i, seg.index)
		}
		if !ok {
			return nil, false
		}
	}
	if i >= len(b) {
		return nil, false
	}
	if b[i] == '"' {
		end, esc, ok := scanString(b, i)
		if !ok {
			return nil, false
		}
		raw := b[i+1 : end-1]
		if !esc {
			return raw, true
		}
		u, ok := jsonstr.Append((*scratch)[:0], raw)
		*scratch = u
		return u, ok
	}
	end, ok := skipValue(b, i)
	if !ok || string(b[i:end]) == "null" {
		return nil, false
	}
	return b[i:end], true
}

// jsonMember finds key in the object starting at b[i] ('{') and returns
// where its value starts.
func jsonMember(b []byte, i int, key string) (int, bool) {
	i = skipWS(b, i+1)
	for i < len(b) && b[i] != '}' {
		if b[i] != '"' {
			return 0, false
		}
		end, esc, ok := scanString(b, i)
		if !ok {
			return 0, false
		}
		match := keyEquals(b[i+1:end-1], esc, key)
		i = skipWS(b, end)
		if i >= len(b) || b[i] != ':' {
			return 0, false
		}
		i = skipWS(b, i+1)
		if match {
			return i, true
		}
		if i, ok = skipValue(b, i); !ok {
			return 0, false
		}
		i = skipWS(b, i)
		if i < len(b) && b[i] == ',' {
			i = skipWS(b, i+1)
		}
	}
	return 0, false
}

// jsonElement finds element index (< 0: none) of the array starting at
// b[i] ('[') and returns where it starts.
func jsonElement(b []byte, i, index int) (int, bool) {
	if index < 0 {
		return 0, false
	}
	i = skipWS(b, i+1)
	for n := 0; ; n++ {
		if i >= len(b) || b[i] == ']' {
			return 0, false
		}
		if n == index {
			return i, true
		}
		var ok bool
		if i, ok = skipValue(b, i); !ok {
			return 0, false
		}
		i = skipWS(b, i)
		if i < len(b) && b[i] == ',' {
			i = skipWS(b, i+1)
		}
	}
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// scanString scans the string starting at b[i] == '"'; end is the index
// after its closing quote.
func scanString(b []byte, i int) (end int, esc bool, ok bool) {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			esc = true
			j++
		case '"':
			return j + 1, esc, true
		}
	}
	return 0, false, false
}

// skipValue returns the index after the value starting at b[i].
func skipValue(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch b[i] {
	case '"':
		end, _, ok := scanString(b, i)
		return end, ok
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, _, ok := scanString(b, j)
				if !ok {
					return 0, false
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, true
				}
			}
		}
		return 0, false
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	return j, j > i
}

// keyEquals reports whether the JSON key raw (its string body, esc when it
// holds escapes) is key, read as encoding/json reads it: escapes decoded,
// and each byte of invalid UTF-8 read as U+FFFD.
func keyEquals(raw []byte, esc bool, key string) bool {
	if !esc && utf8.Valid(raw) {
		return string(raw) == key
	}
	u := raw
	if esc {
		var buf [64]byte
		var ok bool
		if u, ok = jsonstr.Append(buf[:0], raw); !ok {
			return false
		}
	}
	const replacement = "\uFFFD"
	for len(u) > 0 {
		r, n := utf8.DecodeRune(u)
		if r == utf8.RuneError && n == 1 {
			if !strings.HasPrefix(key, replacement) {
				return false
			}
			key, u = key[len(replacement):], u[1:]
			continue
		}
		if len(key) < n || key[:n] != string(u[:n]) { // compared without a copy
			return false
		}
		key, u = key[n:], u[n:]
	}
	return key == ""
}
