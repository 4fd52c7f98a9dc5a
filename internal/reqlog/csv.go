package reqlog

import (
	"io"
	"strconv"

	"github.com/hail-loadgen/hail/internal/stats"
)

// CSVHeader is the per-request CSV's header: oha's seven columns (same
// names, same units: seconds since the run's start, bytes, status), then
// hail's own.
const CSVHeader = "request-start,DNS,DNS+dialup,Response-delay,request-duration,bytes,status,intended-start,error,step,connection,first-token,output-tokens,input-tokens,tpot\n"

// CSV writes one row per request to w as batches arrive.
type CSV struct {
	w     io.Writer
	steps []string
	buf   []byte
	head  bool
}

// NewCSV returns a CSV sink writing to w. steps names the steps by index
// (nil: the step column holds the index).
func NewCSV(w io.Writer, steps []string) *CSV {
	return &CSV{w: w, steps: steps, buf: make([]byte, 0, 256<<10)}
}

func appendSec(b []byte, ns int64) []byte {
	return strconv.AppendFloat(b, float64(ns)/1e9, 'f', 9, 64)
}

// AppendRow appends r as one CSV row (with its newline) to b.
func AppendRow(b []byte, r *stats.TraceRecord, steps []string) []byte {
	b = appendSec(b, r.Start)
	b = append(b, ',')
	b = appendSec(b, r.DNS)
	b = append(b, ',')
	b = appendSec(b, r.Connect)
	b = append(b, ',')
	var delay int64
	if r.FirstByte > 0 {
		delay = r.FirstByte - r.Start
	}
	b = appendSec(b, delay)
	b = append(b, ',')
	b = appendSec(b, r.End-r.Intended)
	b = append(b, ',')
	b = strconv.AppendInt(b, r.Body, 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(r.Status), 10)
	b = append(b, ',')
	b = appendSec(b, r.Intended)
	b = append(b, ',')
	if k, failed := r.Failed(); failed {
		b = append(b, k.String()...)
	}
	b = append(b, ',')
	if int(r.Step) < len(steps) {
		b = appendCSVField(b, steps[r.Step])
	} else {
		b = strconv.AppendInt(b, int64(r.Step), 10)
	}
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(r.Conn), 10)
	b = append(b, ',')
	if r.FirstToken > 0 {
		b = appendSec(b, r.FirstToken)
	}
	b = append(b, ',')
	if r.OutTokens > 0 {
		b = strconv.AppendInt(b, int64(r.OutTokens), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(r.InTokens), 10)
	} else {
		b = append(b, ',')
	}
	b = append(b, ',')
	if tpot, ok := TPOT(r); ok {
		b = appendSec(b, tpot)
	}
	return append(b, '\n')
}

// TPOT is a completed token stream's time per output token, ns: from its
// first content token to its last, over its output tokens less one (as
// vLLM and hail.llm define it); ok is false for fewer than two tokens.
func TPOT(r *stats.TraceRecord) (int64, bool) {
	if r.OutTokens < 2 || r.LastToken < r.FirstToken || r.FirstToken == 0 {
		return 0, false
	}
	return (r.LastToken - r.FirstToken) / int64(r.OutTokens-1), true
}

func appendCSVField(b []byte, s string) []byte {
	quote := false
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == ',' || c == '"' || c == '\n' || c == '\r' {
			quote = true
			break
		}
	}
	if !quote {
		return append(b, s...)
	}
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			b = append(b, '"')
		}
		b = append(b, s[i])
	}
	return append(b, '"')
}

// Write implements Sink.
func (c *CSV) Write(recs []stats.TraceRecord) error {
	b := c.buf[:0]
	if !c.head {
		b = append(b, CSVHeader...)
		c.head = true
	}
	for i := range recs {
		b = AppendRow(b, &recs[i], c.steps)
		if len(b) > 200<<10 {
			if _, err := c.w.Write(b); err != nil {
				return err
			}
			b = b[:0]
		}
	}
	c.buf = b[:0]
	if len(b) == 0 {
		return nil
	}
	_, err := c.w.Write(b)
	return err
}

// Close implements Sink: a run without requests still gets its header.
func (c *CSV) Close(Meta) error {
	if !c.head {
		c.head = true
		_, err := io.WriteString(c.w, CSVHeader)
		return err
	}
	return nil
}

// Abort implements Sink.
func (c *CSV) Abort() {}
