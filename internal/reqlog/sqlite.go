package reqlog

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"net/url"
	"os"
	"strings"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver, pure Go

	"github.com/hail-loadgen/hail/internal/stats"
)

// Schema is the SQLite layout --db-url writes (docs/results.md explains
// it). A file may hold several runs: each gets a row in runs, and its
// requests carry its id. Times are nanoseconds since the run's start
// (runs.start_unix_ns); latency_ns is what the report counts (from the
// intended send time in the open model). latency holds each run's latency
// summary at its end: the responses' and every sent request's.
const Schema = `
CREATE TABLE IF NOT EXISTS runs (
  id            INTEGER PRIMARY KEY,
  start_unix_ns INTEGER NOT NULL DEFAULT 0,
  url           TEXT,
  method        TEXT,
  model         TEXT,
  shard         TEXT,
  hail_version  TEXT,
  records       INTEGER NOT NULL DEFAULT 0,
  complete      INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS steps (
  run  INTEGER NOT NULL,
  idx  INTEGER NOT NULL,
  name TEXT NOT NULL,
  PRIMARY KEY (run, idx)
);
CREATE TABLE IF NOT EXISTS latency (
  run      INTEGER NOT NULL,
  scope    TEXT NOT NULL,
  requests INTEGER NOT NULL,
  failed   INTEGER NOT NULL,
  cut_off  INTEGER NOT NULL,
  not_sent INTEGER NOT NULL,
  p50_ns   INTEGER,
  p90_ns   INTEGER,
  p99_ns   INTEGER,
  max_ns   INTEGER,
  PRIMARY KEY (run, scope)
);
CREATE TABLE IF NOT EXISTS requests (
  run           INTEGER NOT NULL,
  intended_ns   INTEGER NOT NULL,
  start_ns      INTEGER NOT NULL,
  end_ns        INTEGER NOT NULL,
  latency_ns    INTEGER GENERATED ALWAYS AS (end_ns - intended_ns) VIRTUAL,
  first_byte_ns INTEGER,
  connect_ns    INTEGER,
  dns_ns        INTEGER,
  status        INTEGER,
  body_bytes    INTEGER NOT NULL,
  error         TEXT,
  step          INTEGER NOT NULL,
  connection    INTEGER NOT NULL,
  url           TEXT,
  first_token_ns INTEGER,
  output_tokens INTEGER,
  input_tokens  INTEGER,
  last_token_ns INTEGER,
  tpot_ns       INTEGER
);
`

// ohaView is oha's table as a view: oha's columns, names and units
// (seconds since the run's start), responses only, each row with its
// request's URL (the run's when the request has none of its own);
// start_latency_correction is the intended start in the open model and
// NULL in the closed one; run is the run's start in Unix seconds, as oha
// numbers runs.
const ohaView = `
DROP VIEW IF EXISTS oha;
CREATE VIEW oha AS
  SELECT COALESCE(requests.url, runs.url) AS url, start_ns / 1e9 AS start,
         CASE WHEN runs.model = 'open' THEN intended_ns / 1e9 END AS start_latency_correction,
         end_ns / 1e9 AS "end", latency_ns / 1e9 AS duration, status, body_bytes AS len_bytes,
         runs.start_unix_ns / 1000000000 AS run
  FROM requests JOIN runs ON runs.id = requests.run WHERE requests.error IS NULL;
`

const (
	sqlCols    = 17
	rowsPerIns = 128
)

// SQLite is the --db-url sink: every batch is one transaction in a
// write-ahead-logged database, so a process killed mid-run leaves a valid
// file holding every batch committed before. The file is not synced
// (synchronous=OFF: a process crash cannot corrupt a WAL database, only an
// OS crash or power loss during the run could), which saves a sixth of the
// CPU per row.
type SQLite struct {
	path    string
	db      *sql.DB
	conn    *sql.Conn
	run     int64
	many    driver.Stmt // rowsPerIns rows, prepared on conn's driver connection
	one     driver.Stmt
	args    []driver.NamedValue
	urls    func(dst []byte, r *stats.TraceRecord) []byte
	urlBuf  []byte
	n       int64
	errStr  [stats.NumErrorKinds]string
	created bool // the file did not exist before: Abort removes it
}

// DBPath turns a --db-url value into a file path: a plain path, or
// sqlite:PATH / sqlite://PATH / file:PATH as oha and SQLite tools write them.
func DBPath(s string) (string, error) {
	p := s
	for _, pre := range []string{"sqlite://", "sqlite:", "file://", "file:"} {
		if strings.HasPrefix(p, pre) {
			p = strings.TrimPrefix(p, pre)
			break
		}
	}
	if i := strings.IndexByte(p, '?'); i >= 0 {
		p = p[:i]
	}
	if u, err := url.PathUnescape(p); err == nil {
		p = u
	}
	if p == "" || p == ":memory:" {
		return "", fmt.Errorf("--db-url %q: give a file path, e.g. --db-url requests.db", s)
	}
	return p, nil
}

// OpenSQLite opens (creating if needed) the database file at path and
// registers a new run in it.
func OpenSQLite(path string) (*SQLite, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return nil, fmt.Errorf("--db-url %s is a directory", path)
	}
	_, statErr := os.Stat(path)
	created := os.IsNotExist(statErr)
	dsn := "file:" + path + "?_pragma=journal_mode(WAL)&_pragma=synchronous(OFF)&_pragma=busy_timeout(5000)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("--db-url %s: %v", path, err)
	}
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("--db-url %s: %v", path, err)
	}
	s := &SQLite{path: path, db: db, conn: conn, created: created}
	fail := func(err error) (*SQLite, error) {
		s.conn.Close()
		s.db.Close()
		if created {
			removeDB(path)
		}
		return nil, fmt.Errorf("--db-url %s: %v", path, err)
	}
	if _, err := conn.ExecContext(ctx, Schema); err != nil {
		return fail(err)
	}
	if err := addColumns(ctx, conn); err != nil {
		return fail(err)
	}
	if _, err := conn.ExecContext(ctx, ohaView); err != nil {
		return fail(err)
	}
	res, err := conn.ExecContext(ctx, "INSERT INTO runs (start_unix_ns) VALUES (0)")
	if err != nil {
		return fail(err)
	}
	if s.run, err = res.LastInsertId(); err != nil {
		return fail(err)
	}
	// The run id is part of the statement, and latency_ns is computed by
	// SQLite: fewer values to bind per row.
	row := fmt.Sprintf("(%d,", s.run) + strings.TrimSuffix(strings.Repeat("?,", sqlCols), ",") + ")"
	ins := "INSERT INTO requests (run, intended_ns, start_ns, end_ns, first_byte_ns, connect_ns, dns_ns, status, body_bytes, error, step, connection, url, first_token_ns, output_tokens, input_tokens, last_token_ns, tpot_ns) VALUES "
	// Rows are inserted through the driver directly (database/sql's
	// per-argument checks cost a fifth of the time); conn is this sink's
	// own connection, used by one goroutine.
	err = conn.Raw(func(dc any) error {
		pc, ok := dc.(driver.ConnPrepareContext)
		if !ok {
			return fmt.Errorf("the sqlite driver cannot prepare statements")
		}
		var err error
		if s.many, err = pc.PrepareContext(ctx, ins+strings.TrimSuffix(strings.Repeat(row+",", rowsPerIns), ",")); err != nil {
			return err
		}
		s.one, err = pc.PrepareContext(ctx, ins+row)
		return err
	})
	if err != nil {
		return fail(err)
	}
	s.args = make([]driver.NamedValue, sqlCols*rowsPerIns)
	for i := range s.args {
		s.args[i].Ordinal = i + 1
	}
	for k := range s.errStr {
		s.errStr[k] = stats.ErrorKind(k).String()
	}
	return s, nil
}

// addColumns adds requests.url, first_token_ns and the token columns to a
// file written before they existed.
func addColumns(ctx context.Context, conn *sql.Conn) error {
	rows, err := conn.QueryContext(ctx, "SELECT name FROM pragma_table_info('requests')")
	if err != nil {
		return err
	}
	found := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return err
		}
		found[name] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, col := range []string{"url TEXT", "first_token_ns INTEGER", "output_tokens INTEGER", "input_tokens INTEGER", "last_token_ns INTEGER", "tpot_ns INTEGER"} {
		name, _, _ := strings.Cut(col, " ")
		if found[name] {
			continue
		}
		if _, err := conn.ExecContext(ctx, "ALTER TABLE requests ADD COLUMN "+col); err != nil {
			return err
		}
	}
	return nil
}

// SetURLs makes every row carry its request's URL, appended to dst by
// urls (called on the writer's goroutine). Without it requests.url is NULL
// and the run's URL (runs.url) stands for every request, as for a run to
// one URL.
func (s *SQLite) SetURLs(urls func(dst []byte, r *stats.TraceRecord) []byte) { s.urls = urls }

// Path is the database file.
func (s *SQLite) Path() string { return s.path }

// Run is this run's id in the runs table.
func (s *SQLite) Run() int64 { return s.run }

// setArgs puts r's values into a (sqlCols of them).
func (s *SQLite) setArgs(a []driver.NamedValue, r *stats.TraceRecord) {
	var fb, conn, dns, status, errv driver.Value
	if r.FirstByte > 0 {
		fb = r.FirstByte
	}
	if r.Connect > 0 {
		conn, dns = r.Connect, r.DNS
	}
	if k, failed := r.Failed(); failed {
		errv = s.errStr[k]
	}
	if r.Status != 0 { // a response, or one that failed a scenario check
		status = int64(r.Status)
	}
	a[0].Value, a[1].Value, a[2].Value, a[3].Value = r.Intended, r.Start, r.End, fb
	a[4].Value, a[5].Value, a[6].Value, a[7].Value = conn, dns, status, r.Body
	a[8].Value, a[9].Value, a[10].Value = errv, int64(r.Step), int64(r.Conn)
	a[11].Value, a[12].Value = nil, nil
	if s.urls != nil {
		s.urlBuf = s.urls(s.urlBuf[:0], r)
		a[11].Value = string(s.urlBuf)
	}
	if r.FirstToken > 0 {
		a[12].Value = r.FirstToken
	}
	a[13].Value, a[14].Value, a[15].Value, a[16].Value = nil, nil, nil, nil
	if r.OutTokens > 0 {
		a[13].Value, a[14].Value, a[15].Value = int64(r.OutTokens), int64(r.InTokens), r.LastToken
	}
	if tpot, ok := TPOT(r); ok {
		a[16].Value = tpot
	}
}

// Write implements Sink: one transaction per batch.
func (s *SQLite) Write(recs []stats.TraceRecord) error {
	ctx := context.Background()
	err := s.conn.Raw(func(dc any) error {
		ex, ok := dc.(driver.ExecerContext)
		if !ok {
			return fmt.Errorf("the sqlite driver cannot execute statements")
		}
		if _, err := ex.ExecContext(ctx, "BEGIN", nil); err != nil {
			return err
		}
		rollback := func(err error) error {
			_, _ = ex.ExecContext(ctx, "ROLLBACK", nil)
			return err
		}
		many, one := s.many.(driver.StmtExecContext), s.one.(driver.StmtExecContext)
		i := 0
		for ; i+rowsPerIns <= len(recs); i += rowsPerIns {
			for j := range rowsPerIns {
				s.setArgs(s.args[j*sqlCols:(j+1)*sqlCols], &recs[i+j])
			}
			if _, err := many.ExecContext(ctx, s.args); err != nil {
				return rollback(err)
			}
		}
		for ; i < len(recs); i++ {
			s.setArgs(s.args[:sqlCols], &recs[i])
			if _, err := one.ExecContext(ctx, s.args[:sqlCols]); err != nil {
				return rollback(err)
			}
		}
		_, err := ex.ExecContext(ctx, "COMMIT", nil)
		return err
	})
	if err != nil {
		return fmt.Errorf("--db-url %s: %v", s.path, err)
	}
	s.n += int64(len(recs))
	return nil
}

// Close implements Sink: it records the run's description, marks it
// complete and closes the file (checkpointing the write-ahead log into it).
func (s *SQLite) Close(m Meta) error {
	ctx := context.Background()
	defer s.db.Close()
	defer s.conn.Close()
	s.closeStmts()
	if _, err := s.conn.ExecContext(ctx, "UPDATE runs SET start_unix_ns=?, url=?, method=?, model=?, shard=?, hail_version=?, records=?, complete=1 WHERE id=?",
		m.Start.UnixNano(), m.URL, m.Method, m.Model, m.Shard, m.Version, s.n, s.run); err != nil {
		return fmt.Errorf("--db-url %s: %v", s.path, err)
	}
	for i, name := range m.Steps {
		if _, err := s.conn.ExecContext(ctx, "INSERT OR REPLACE INTO steps (run, idx, name) VALUES (?, ?, ?)", s.run, i, name); err != nil {
			return fmt.Errorf("--db-url %s: %v", s.path, err)
		}
	}
	ns := func(v int64) any {
		if v < 0 {
			return nil
		}
		return v
	}
	for _, l := range m.Latency {
		if _, err := s.conn.ExecContext(ctx, "INSERT OR REPLACE INTO latency (run, scope, requests, failed, cut_off, not_sent, p50_ns, p90_ns, p99_ns, max_ns) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			s.run, l.Scope, l.Requests, l.Failed, l.CutOff, l.NotSent, ns(l.P50), ns(l.P90), ns(l.P99), ns(l.Max)); err != nil {
			return fmt.Errorf("--db-url %s: %v", s.path, err)
		}
	}
	if _, err := s.conn.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		return fmt.Errorf("--db-url %s: %v", s.path, err)
	}
	return nil
}

// Abort implements Sink: the run never started, so its row goes.
func (s *SQLite) Abort() {
	ctx := context.Background()
	_, _ = s.conn.ExecContext(ctx, "DELETE FROM runs WHERE id=?", s.run)
	s.closeStmts()
	s.conn.Close()
	s.db.Close()
	if s.created {
		removeDB(s.path)
	}
}

func removeDB(path string) {
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		os.Remove(path + suffix)
	}
}

func (s *SQLite) closeStmts() {
	_ = s.conn.Raw(func(any) error {
		for _, st := range []driver.Stmt{s.many, s.one} {
			if st != nil {
				st.Close()
			}
		}
		return nil
	})
}
