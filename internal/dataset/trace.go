package dataset

import (
	"bytes"
	"errors"
	"fmt"
	"time"
)

// An Azure trace is a CSV file as Microsoft published its LLM inference
// traces (AzurePublicDataset: AzureLLMInferenceTrace_code.csv, …_conv.csv
// and the 2024 week-long ones):
//
//	TIMESTAMP,ContextTokens,GeneratedTokens
//	2023-11-16 18:15:46.6805900,374,44
//
// Request i is the trace's line i: its prompt has ContextTokens tokens
// (hail's words), it asks for GeneratedTokens (at least 1), and it is due
// at its TIMESTAMP less the first line's, divided by the speedup. The
// columns are found by their names in the header, in any order, among
// others; a TIMESTAMP may also be a number of seconds. The lines must be
// in time order.

// traceHelp is what the file must be.
const traceHelp = "an Azure trace is CSV with the header TIMESTAMP,ContextTokens,GeneratedTokens and one request per line, in time order"

// indexAzure checks and indexes every line after the header.
func (d *Dataset) indexAzure() error {
	f := d.f
	header := true
	var r Record
	var last int64
	lastLine := 0
	return f.lines(func(line, start, end int) error {
		b := f.data[start:end]
		if header {
			header = false
			return d.columns(b)
		}
		ts, err := d.traceLine(b, &r)
		if err != nil {
			return fmt.Errorf("%s line %d: %v; %s", d.Path, line, err, traceHelp)
		}
		if len(f.off) == 0 {
			d.first = ts
		} else if ts < last {
			return fmt.Errorf("%s line %d: its TIMESTAMP is before line %d's; %s (sort it by its first column)", d.Path, line, lastLine, traceHelp)
		}
		last, lastLine = ts, line
		f.off = append(f.off, uint64(start))
		return nil
	})
}

// The trace's columns, by name.
var traceColumns = [3]string{"TIMESTAMP", "ContextTokens", "GeneratedTokens"}

// columns finds the trace's columns in its header.
func (d *Dataset) columns(b []byte) error {
	d.cols = [3]int{-1, -1, -1}
	i := 0
	for field := range bytes.SplitSeq(b, []byte(",")) {
		name := bytes.Trim(bytes.TrimSpace(field), `"`)
		for c, want := range traceColumns {
			if bytes.EqualFold(name, []byte(want)) {
				d.cols[c] = i
			}
		}
		i++
	}
	for c, at := range d.cols {
		if at < 0 {
			return fmt.Errorf("%s: its header %q has no %s column; %s", d.Path, b, traceColumns[c], traceHelp)
		}
	}
	return nil
}

// traceLine reads a trace's line: r's lengths, and its timestamp in ns.
func (d *Dataset) traceLine(b []byte, r *Record) (int64, error) {
	*r = Record{}
	var ts int64
	field, start := 0, 0
	found := 0
	for i := 0; i <= len(b); i++ {
		if i < len(b) && b[i] != ',' {
			continue
		}
		v := bytes.TrimSpace(b[start:i])
		switch field {
		case d.cols[0]:
			t, ok := parseTime(v)
			if !ok {
				return 0, fmt.Errorf("TIMESTAMP %q is neither YYYY-MM-DD HH:MM:SS[.fraction] nor a number of seconds", v)
			}
			ts = t
			found++
		case d.cols[1], d.cols[2]:
			n, ok := integer(v, 0, len(v), maxOutput)
			if !ok {
				return 0, fmt.Errorf("%q is not a token count", v)
			}
			if field == d.cols[1] {
				r.Input = max(n, 1)
			} else {
				r.Output = max(n, 1)
			}
			found++
		}
		field++
		start = i + 1
	}
	if found != 3 {
		return 0, errors.New("it has fewer columns than the header")
	}
	return ts, nil
}

// azure reads trace line b (checked when indexed) into r.
func (d *Dataset) azure(b []byte, r *Record) {
	ts, _ := d.traceLine(b, r)
	r.At = time.Duration(float64(ts-d.first) / d.o.Speedup)
}

// parseTime reads YYYY-MM-DD HH:MM:SS[.fraction] (or a T between date and
// time, and a Z after it: UTC either way) or a number of seconds, as ns.
func parseTime(b []byte) (int64, bool) {
	if len(b) >= 19 && b[4] == '-' {
		return parseDate(b)
	}
	// Seconds: digits, a fraction.
	var sec, frac int64
	scale := int64(1e9)
	dot := false
	if len(b) == 0 || len(b) > 30 {
		return 0, false
	}
	for _, c := range b {
		switch {
		case c == '.' && !dot:
			dot = true
		case digit(c) && !dot:
			sec = sec*10 + int64(c-'0')
		case digit(c):
			if scale > 1 {
				scale /= 10
				frac += int64(c-'0') * scale
			}
		default:
			return 0, false
		}
	}
	if sec > 1<<33 { // 272 years
		return 0, false
	}
	return sec*1e9 + frac, true
}

// parseDate reads YYYY-MM-DD HH:MM:SS[.fraction][Z] as Unix ns (years
// 1700 to 2200: Unix ns fit in 64 bits).
func parseDate(b []byte) (int64, bool) {
	num := func(s []byte) (int64, bool) {
		var n int64
		for _, c := range s {
			if !digit(c) {
				return 0, false
			}
			n = n*10 + int64(c-'0')
		}
		return n, true
	}
	y, ok1 := num(b[0:4])
	mo, ok2 := num(b[5:7])
	dd, ok3 := num(b[8:10])
	h, ok4 := num(b[11:13])
	mi, ok5 := num(b[14:16])
	s, ok6 := num(b[17:19])
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !ok6 || b[7] != '-' || b[10] != ' ' && b[10] != 'T' || b[13] != ':' || b[16] != ':' ||
		y < 1700 || y > 2200 || mo < 1 || mo > 12 || dd < 1 || dd > 31 || h > 23 || mi > 59 || s > 60 {
		return 0, false
	}
	rest := b[19:]
	if n := len(rest); n > 0 && rest[n-1] == 'Z' {
		rest = rest[:n-1]
	}
	var frac int64
	if len(rest) > 0 {
		if rest[0] != '.' || len(rest) == 1 {
			return 0, false
		}
		scale := int64(1e9)
		for _, c := range rest[1:] {
			if !digit(c) {
				return 0, false
			}
			if scale > 1 {
				scale /= 10
				frac += int64(c-'0') * scale
			}
		}
	}
	days := daysFromCivil(y, mo, dd)
	return ((days*24+h)*60+mi)*60*1e9 + s*1e9 + frac, true
}

// daysFromCivil is the number of days from 1970-01-01 to y-m-d (Howard
// Hinnant's algorithm).
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}
