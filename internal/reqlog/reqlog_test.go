package reqlog

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/stats"
)

func rec(i int) stats.TraceRecord {
	r := stats.TraceRecord{Intended: int64(i) * 1000, Start: int64(i)*1000 + 50, End: int64(i)*1000 + 25000,
		FirstByte: int64(i)*1000 + 20000, Body: 12, Status: 200, Conn: int32(i % 7), Step: uint16(i % 2)}
	if i%100 == 0 {
		r.Status = 0
		r.SetError(stats.ErrReset)
	}
	if i%50 == 1 {
		r.Connect, r.DNS = 40000, 1000
	}
	if i%100 == 7 { // a response that failed a scenario check keeps its status
		r.Status = 503
		r.SetError(stats.ErrCheckStatus)
	}
	return r
}

// Records traced from many goroutines through several recorders all reach
// both sinks exactly once.
func TestWriterSQLiteAndCSV(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.db")
	db, err := OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	var csv bytes.Buffer
	tr := stats.NewTracer(4)
	recs := []*stats.Recorder{stats.NewRecorder(), stats.NewRecorder(), stats.NewRecorder()}
	for _, r := range recs {
		tr.Attach(r)
	}
	w := Start(tr, db, NewCSV(&csv, []string{"login", "browse, list"}))
	const per, workers = 3000, 6
	var wg sync.WaitGroup
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				r := rec(g*per + i)
				recs[g%len(recs)].Trace(&r)
			}
		}()
	}
	wg.Wait()
	time.Sleep(10 * time.Millisecond)
	if err := w.Finish(Meta{Start: time.Unix(1700000000, 0), URL: "http://127.0.0.1/", Steps: []string{"login", "browse, list"}, Version: "test"}); err != nil {
		t.Fatal(err)
	}
	const total = per * workers
	lines := strings.Split(strings.TrimSpace(csv.String()), "\n")
	if lines[0]+"\n" != CSVHeader || len(lines) != total+1 {
		t.Fatalf("csv: header %q, %d lines, want %d", lines[0], len(lines), total+1)
	}
	if !strings.Contains(csv.String(), `,connection reset by peer,`) || !strings.Contains(csv.String(), `"browse, list"`) {
		t.Error("csv lacks the error kind or the quoted step name")
	}
	sdb, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	var n, errs, complete, oha, fromView int64
	ctx := context.Background()
	_ = sdb.QueryRowContext(ctx, "SELECT count(*), count(error) FROM requests").Scan(&n, &errs)
	_ = sdb.QueryRowContext(ctx, "SELECT complete, records FROM runs").Scan(&complete, &oha)
	_ = sdb.QueryRowContext(ctx, "SELECT count(*) FROM oha WHERE duration > 0").Scan(&fromView)
	if n != total || errs != 2*total/100 || complete != 1 || oha != total || fromView != total-2*total/100 {
		t.Errorf("rows %d errors %d complete %d records %d oha view %d", n, errs, complete, oha, fromView)
	}
	var checked, noStatus int64
	_ = sdb.QueryRowContext(ctx, "SELECT count(*) FROM requests WHERE status = 503 AND error = 'check failed: status'").Scan(&checked)
	_ = sdb.QueryRowContext(ctx, "SELECT count(*) FROM requests WHERE status IS NULL AND error = 'connection reset by peer'").Scan(&noStatus)
	if checked != total/100 || noStatus != total/100 {
		t.Errorf("%d check failures kept their status, %d transport errors have none; want %d each", checked, noStatus, total/100)
	}
	if !strings.Contains(csv.String(), ",503,") || !strings.Contains(csv.String(), ",check failed: status,") {
		t.Error("csv lacks a failed check with its status")
	}
	var lat int64
	_ = sdb.QueryRowContext(ctx, "SELECT latency_ns FROM requests WHERE intended_ns = 5000").Scan(&lat)
	if lat != 25000 {
		t.Errorf("latency_ns %d, want 25000", lat)
	}
}

// Every row carries its request's URL (from the record's Hit), and oha's
// view has oha's columns and meaning: the URL (the run's when the request
// has none of its own), the corrected start only in the open model, the run
// as Unix seconds. A file from before the url column gets it.
func TestURLColumnAndOhaView(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.db")
	old, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = old.Exec(`CREATE TABLE requests (run INTEGER NOT NULL, intended_ns INTEGER NOT NULL, start_ns INTEGER NOT NULL,
		end_ns INTEGER NOT NULL, latency_ns INTEGER GENERATED ALWAYS AS (end_ns - intended_ns) VIRTUAL, first_byte_ns INTEGER,
		connect_ns INTEGER, dns_ns INTEGER, status INTEGER, body_bytes INTEGER NOT NULL, error TEXT, step INTEGER NOT NULL,
		connection INTEGER NOT NULL);
		CREATE VIEW oha AS SELECT 1 AS url;`)
	old.Close()
	if err != nil {
		t.Fatal(err)
	}
	for run, model := range []string{"open", "closed"} {
		db, err := OpenSQLite(path)
		if err != nil {
			t.Fatal(err)
		}
		if model == "open" {
			db.SetURLs(func(dst []byte, r *stats.TraceRecord) []byte {
				return fmt.Appendf(dst, "http://127.0.0.1/item/%d", r.Hit)
			})
		}
		batch := []stats.TraceRecord{rec(1), rec(2), rec(3)}
		for i := range batch {
			batch[i].Hit = uint64(10 + i)
		}
		if err := db.Write(batch); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(Meta{Start: time.Unix(1700000000+int64(run), 0), URL: "http://127.0.0.1/", Model: model}); err != nil {
			t.Fatal(err)
		}
	}
	sdb, _ := sql.Open("sqlite", "file:"+path)
	defer sdb.Close()
	rows, err := sdb.Query(`SELECT url, start, start_latency_correction, "end", duration, status, len_bytes, run FROM oha ORDER BY run, start`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var u string
		var start, end, dur float64
		var corr sql.NullFloat64
		var status, size, run int64
		if err := rows.Scan(&u, &start, &corr, &end, &dur, &status, &size, &run); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s %g %v %g %g %d %d %d", u, start, corr.Valid, end, dur, status, size, run))
	}
	want := []string{
		"http://127.0.0.1/item/10 1.05e-06 true 2.6e-05 2.5e-05 200 12 1700000000",
		"http://127.0.0.1/item/11 2.05e-06 true 2.7e-05 2.5e-05 200 12 1700000000",
		"http://127.0.0.1/item/12 3.05e-06 true 2.8e-05 2.5e-05 200 12 1700000000",
		"http://127.0.0.1/ 1.05e-06 false 2.6e-05 2.5e-05 200 12 1700000001",
		"http://127.0.0.1/ 2.05e-06 false 2.7e-05 2.5e-05 200 12 1700000001",
		"http://127.0.0.1/ 3.05e-06 false 2.8e-05 2.5e-05 200 12 1700000001",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("oha view:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestDBPath(t *testing.T) {
	for in, want := range map[string]string{"r.db": "r.db", "sqlite:r.db": "r.db", "sqlite:///tmp/r.db": "/tmp/r.db", "file:x.db?mode=rwc": "x.db"} {
		if got, err := DBPath(in); err != nil || got != want {
			t.Errorf("DBPath(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := DBPath(":memory:"); err == nil {
		t.Error(":memory: accepted")
	}
}

func BenchmarkSQLiteWrite(b *testing.B) {
	db, err := OpenSQLite(filepath.Join(b.TempDir(), "b.db"))
	if err != nil {
		b.Fatal(err)
	}
	batch := make([]stats.TraceRecord, stats.TraceBatchSize)
	for i := range batch {
		batch[i] = rec(i)
	}
	b.ResetTimer()
	u0 := stats.ReadUsage()
	for i := 0; i < b.N; i += len(batch) {
		if err := db.Write(batch); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(stats.ReadUsage().Sub(u0).CPU().Nanoseconds())/float64(b.N), "cpu-ns/row")
	db.Close(Meta{})
}

func BenchmarkCSVRow(b *testing.B) {
	r := rec(3)
	buf := make([]byte, 0, 256)
	for b.Loop() {
		buf = AppendRow(buf[:0], &r, nil)
	}
}
