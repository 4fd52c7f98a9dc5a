package scenario

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
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
	Name  string
	Order string // sequential, random or unique
	File  string

	cols    map[string]int
	rows    [][][]byte
	next    atomic.Uint64
	drawn   atomic.Int64 // rows handed out
	refused atomic.Int64 // rows asked of a used-up unique feed
	out     atomic.Bool  // a unique feed is used up
	onOut   func()       // called once when a unique feed runs out
}

// Feed orders.
const (
	feedSequential = "sequential"
	feedRandom     = "random"
	feedUnique     = "unique"
)

// row hands out the index of the next row, or false when a unique feed is
// used up.
func (f *Feed) row(r *random.Rand) (int32, bool) {
	n := uint64(len(f.rows))
	var i uint64
	switch f.Order {
	case feedRandom:
		i = r.Uint64n(n)
	case feedUnique:
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

// Rows is the number of rows in the file.
func (f *Feed) Rows() int { return len(f.rows) }

// Columns are the column names, sorted.
func (f *Feed) Columns() []string {
	out := make([]string, 0, len(f.cols))
	for c := range f.cols {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// loadFeed reads a feed file: CSV with a header row, or JSON Lines (one
// object per line; strings are unescaped, other values kept as JSON text).
// format is "csv" or "jsonl"; limit bounds the file's size as for
// body_file (bodyfile.Read).
func loadFeed(path, format string, limit int64) (cols map[string]int, rows [][][]byte, err error) {
	data, err := bodyfile.Read(path, limit)
	if err != nil {
		return nil, nil, err
	}
	if format == "jsonl" {
		cols, rows, err = parseJSONL(data)
	} else {
		cols, rows, err = parseCSV(data)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %v", path, err)
	}
	if len(rows) == 0 {
		return nil, nil, fmt.Errorf("%s: expected at least one row of data, found none", path)
	}
	return cols, rows, nil
}

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
		if !nameRE.MatchString(h) {
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
				if !nameRE.MatchString(k) {
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

// feedEnd ends a run whose every activity needs a used-up unique feed.
type feedEnd struct {
	once  sync.Once
	ch    chan struct{}
	mu    sync.Mutex
	why   string
	needs [][]*Feed // per activity of the mix: the unique feeds its first step needs
}

// newFeedEnd watches the unique feeds of s: when the first steps of all its
// activities need one that is used up, the run ends (nil without unique feeds).
func newFeedEnd(s *Scenario) *feedEnd {
	e := &feedEnd{ch: make(chan struct{})}
	unique := false
	for _, a := range s.mix.acts {
		st := a.step
		if a.flow >= 0 {
			st = s.Flows[a.flow].steps[0]
		}
		var fs []*Feed
		for _, i := range s.Steps[st].feeds {
			if f := s.Feeds[i]; f.Order == feedUnique {
				fs = append(fs, f)
				unique = true
			}
		}
		e.needs = append(e.needs, fs)
	}
	if !unique {
		return nil
	}
	for _, f := range s.Feeds {
		if f.Order == feedUnique {
			f.onOut = func() { e.check(f) }
		}
	}
	return e
}

// check closes the channel when no activity can run any more.
func (e *feedEnd) check(f *Feed) {
	for _, fs := range e.needs {
		out := false
		for _, x := range fs {
			out = out || x.out.Load()
		}
		if !out {
			return
		}
	}
	e.once.Do(func() {
		e.mu.Lock()
		e.why = fmt.Sprintf("feed `%s` used up (order: unique, %d rows)", f.Name, len(f.rows))
		e.mu.Unlock()
		close(e.ch)
	})
}

// reason is why the run ended early, or "".
func (e *feedEnd) reason() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.why
}
