package scenario

import (
	"bytes"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/hail-loadgen/hail/internal/http1"
	"github.com/hail-loadgen/hail/internal/scenario/jsonpath"
	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/internal/status"
)

// A check is one of a step's expect: conditions on its responses. A
// response that fails one is recorded as an error of the check's kind
// ("check failed: status", …) instead of as a response, so error counts,
// error_rate thresholds and the reports see it; its captures are skipped.
// Checks read the parser's kept body (the first body_limit bytes) and the
// header values the engines keep for them (http1.Parser.WantHeaders).
type check struct {
	kind   checkKind
	desc   string   // for reports: "status 201, 202", "json id = \"x\"", …
	codes  [][2]int // status: inclusive ranges
	needle []byte   // body_contains
	path   jsonpath.Path
	want   jsonWant
	header string // lower case
	value  []byte
	failed atomic.Int64
}

type checkKind uint8

const (
	checkStatus checkKind = iota
	checkBody
	checkJSON
	checkHeader
)

// errorKind is the error a failed check is recorded as.
func (k checkKind) errorKind() stats.ErrorKind {
	switch k {
	case checkStatus:
		return stats.ErrCheckStatus
	case checkBody:
		return stats.ErrCheckBody
	case checkJSON:
		return stats.ErrCheckJSON
	}
	return stats.ErrCheckHeader
}

// jsonWant is the value a json check compares with: a string (unescaped),
// a number, true or false, or null (which an absent value also matches).
type jsonWant struct {
	kind byte // 's', 'n', 'b' (text holds "true"/"false"), '0' (null)
	text []byte
	num  float64
}

// pass reports whether p meets the check. scratch is the caller's buffer
// for unescaped JSON strings.
func (c *check) pass(p *http1.Parser, scratch *[]byte) bool {
	switch c.kind {
	case checkStatus:
		for _, r := range c.codes {
			if p.Status >= r[0] && p.Status <= r[1] {
				return true
			}
		}
		return false
	case checkBody:
		return bytes.Contains(p.Body, c.needle)
	case checkHeader:
		for i, name := range p.WantHeaders {
			if name == c.header && i < len(p.HeaderValues) {
				return bytes.Equal(bytes.TrimSpace(p.HeaderValues[i]), c.value)
			}
		}
		return false
	}
	got, ok := c.path.Lookup(p.Body, scratch)
	if !ok {
		return c.want.kind == '0'
	}
	switch c.want.kind {
	case 'n':
		f, err := strconv.ParseFloat(string(got), 64)
		return err == nil && f == c.want.num
	case '0':
		return false
	}
	return bytes.Equal(got, c.want.text)
}

// statusDesc describes a status check's codes: "201, 202, 4xx".
func statusDesc(codes [][2]int) string {
	var parts []string
	for _, r := range codes {
		switch {
		case r[0] == r[1]:
			parts = append(parts, status.Name(r[0]))
		case r[1]-r[0] == 99:
			parts = append(parts, strconv.Itoa(r[0]/100)+"xx")
		default:
			parts = append(parts, strconv.Itoa(r[0])+"-"+strconv.Itoa(r[1]))
		}
	}
	return strings.Join(parts, ", ")
}
