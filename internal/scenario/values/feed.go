package values

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/hail-loadgen/hail/internal/bodyfile"
	"github.com/hail-loadgen/hail/internal/random"
)

// Feed is a data file whose rows fill templates: {{feed.NAME.COLUMN}}.
// A request (or a flow iteration) takes one row, so the columns of a row
// stay together. Rows are handed out in file order (sequential, wrapping
// around), at random, or each once (unique): a unique feed that runs out
// ends the steps that need it, and the run when nothing else can run.
// A Feed is safe for every worker at once: taking a row is one atomic add.
type Feed struct {
	// Name is the feed's name in the file ({{feed.NAME.COLUMN}}).
	Name string
	// Order is how rows are handed out: FeedSequential, FeedRandom or
	// FeedUnique.
	Order string
	// File is the path the file names (reports show it).
	File string

	cols    map[string]int
	rows    [][][]byte
	next    atomic.Uint64
	drawn   atomic.Int64 // rows handed out
	refused atomic.Int64 // rows asked of a used-up unique feed
	out     atomic.Bool  // a unique feed is used up
	onOut   func()       // called once when a unique feed runs out
}

// Feed orders: in file order (wrapping around), at random, each row once.
const (
	FeedSequential = "sequential"
	FeedRandom     = "random"
	FeedUnique     = "unique"
)

// Row hands out the index of the next row, or false when a unique feed is
// used up.
func (f *Feed) Row(r *random.Rand) (int32, bool) {
	n := uint64(len(f.rows))
	var i uint64
	switch f.Order {
	case FeedRandom:
		i = r.Uint64n(n)
	case FeedUnique:
		if f.out.Load() {
			f.refused.Add(1)
			return 0, false
		}
		if i = f.next.Add(1) - 1; i >= n {
			f.refused.Add(1)
			if !f.out.Swap(true) && f.onOut != nil {
				f.onOut()
			}
			return 0, false
		}
	default:
		i = (f.next.Add(1) - 1) % n
	}
	f.drawn.Add(1)
	return int32(i), true
}

// Partition keeps the rows of a unique feed that shard index of count
// takes — rows index, index+count, index+2·count, … — so the shards of a
// distributed run together use each row once. Other orders keep every row
// (each shard reuses them as one process would). Call it before the run.
func (f *Feed) Partition(index, count int) {
	if f.Order != FeedUnique || count <= 1 {
		return
	}
	var rows [][][]byte
	for i := index; i < len(f.rows); i += count {
		rows = append(rows, f.rows[i])
	}
	f.rows = rows
}

// Rows is the number of rows in the file.
func (f *Feed) Rows() int { return len(f.rows) }

// Value is column col of row (a Row's index).
func (f *Feed) Value(row int32, col int) []byte { return f.rows[row][col] }

// Column is the index of the column named name, for Value.
func (f *Feed) Column(name string) (int, bool) {
	c, ok := f.cols[name]
	return c, ok
}

// Used is how many rows were handed out.
func (f *Feed) Used() int64 { return f.drawn.Load() }

// Refused is how many rows were asked of a used-up unique feed.
func (f *Feed) Refused() int64 { return f.refused.Load() }

// UsedUp reports whether a unique feed has run out.
func (f *Feed) UsedUp() bool { return f.out.Load() }

// OnUsedUp sets what to call, once, when a unique feed runs out.
func (f *Feed) OnUsedUp(fn func()) { f.onOut = fn }

// Columns are the column names, sorted.
func (f *Feed) Columns() []string {
	out := make([]string, 0, len(f.cols))
	for c := range f.cols {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// Read fills f with the rows of the feed file at path: CSV with a header
// row, or JSON Lines (one object per line; strings are unescaped, other
// values kept as JSON text). format is "csv" or "jsonl"; limit bounds the
// file's size as for body_file (bodyfile.Read).
func (f *Feed) Read(path, format string, limit int64) error {
	data, err := bodyfile.Read(path, limit)
	if err != nil {
		return err
	}
	var cols map[string]int
	var rows [][][]byte
	if format == "jsonl" {
		cols, rows, err = parseJSONL(data)
	} else {
		cols, rows, err = parseCSV(data)
	}
	if err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	if len(rows) == 0 {
		return fmt.Errorf("%s: expected at least one row of data, found none", path)
	}
	f.cols, f.rows = cols, rows
	return nil
}

// columnName is what a column may be called: it is written
// {{feed.NAME.COLUMN}}.
var columnName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`)

func parseCSV(data []byte) (map[string]int, [][][]byte, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.ReuseRecord = false
	header, err := r.Read()
	if err == io.EOF {
		return nil, nil, fmt.Errorf("expected a header row of column names, found an empty file")
	}
	if err != nil {
		return nil, nil, csvError(err)
	}
	cols := map[string]int{}
	for i, h := range header {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		if !columnName.MatchString(h) {
			return nil, nil, fmt.Errorf("line 1: column %d: expected a column name of letters, digits, _ . or -, found %q", i+1, h)
		}
		if _, dup := cols[h]; dup {
			return nil, nil, fmt.Errorf("line 1: duplicate column %q", h)
		}
		cols[h] = i
	}
	var rows [][][]byte
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, csvError(err)
		}
		row := make([][]byte, len(rec))
		for i, v := range rec {
			row[i] = []byte(v)
		}
		rows = append(rows, row)
	}
	return cols, rows, nil
}

func csvError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("line %d: %v", pe.Line, pe.Err)
	}
	return err
}

func parseJSONL(data []byte) (map[string]int, [][][]byte, error) {
	cols := map[string]int{}
	var objs []map[string]json.RawMessage
	var lines []int
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for ln := 1; sc.Scan(); ln++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(line, &obj); err != nil || obj == nil {
			return nil, nil, fmt.Errorf("line %d: expected a JSON object such as {\"name\": \"ann\"}, found %.40q", ln, line)
		}
		for k := range obj {
			if _, ok := cols[k]; !ok {
				if !columnName.MatchString(k) {
					return nil, nil, fmt.Errorf("line %d: key %q: expected letters, digits, _ . or - (it names a column)", ln, k)
				}
				cols[k] = len(cols)
			}
		}
		objs = append(objs, obj)
		lines = append(lines, ln)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, err
	}
	rows := make([][][]byte, len(objs))
	for i, obj := range objs {
		row := make([][]byte, len(cols))
		for k, c := range cols {
			raw, ok := obj[k]
			if !ok {
				return nil, nil, fmt.Errorf("line %d: no key %q: every line needs every column the file uses", lines[i], k)
			}
			var s string
			if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
				row[c] = []byte(s)
			} else if string(raw) != "null" {
				row[c] = append([]byte(nil), raw...)
			}
		}
		rows[i] = row
	}
	return cols, rows, nil
}
