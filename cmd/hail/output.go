package main

import (
	"fmt"
	"github.com/hail-loadgen/hail/internal/plan"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"golang.org/x/term"
)

// output is where the report goes: stdout, or a file written under a
// temporary name and renamed into place only when complete, so no reader
// ever sees a half-written report.
type output struct {
	mu   sync.Mutex
	f    *os.File
	path string // final path; "" for stdout
	done bool
}

func openOutput(path string) (*output, error) {
	if path == "" {
		return &output{}, nil
	}
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("-o %s: directory %s does not exist", path, dir)
	}
	f, err := createTemp(dir, "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return nil, fmt.Errorf("-o %s: cannot write there: %v", path, unwrapPathErr(err))
	}
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
		_ = f.Chmod(st.Mode().Perm()) // replacing a file keeps its permissions
	}
	o := &output{f: f, path: path}
	signals.mu.Lock()
	signals.out = o // removed if a second signal ends hail before the run
	signals.mu.Unlock()
	return o, nil
}

// createTemp creates a new file named prefix followed by a random number in
// dir. Unlike os.CreateTemp (always 0600), its permissions follow the umask
// as any newly created file's do (0644 with the usual umask 022).
func createTemp(dir, prefix string) (*os.File, error) {
	for try := 0; ; try++ {
		name := filepath.Join(dir, prefix+strconv.FormatUint(rand.Uint64(), 36))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if os.IsExist(err) && try < 100 {
			continue
		}
		return f, err
	}
}

func (o *output) Write(b []byte) (int, error) {
	if o.f == nil {
		return os.Stdout.Write(b)
	}
	return o.f.Write(b)
}

// Commit moves the finished file into place.
func (o *output) Commit() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.f == nil || o.done {
		return nil
	}
	o.done = true
	if err := o.f.Sync(); err != nil {
		o.f.Close()
		os.Remove(o.f.Name())
		return fmt.Errorf("-o %s: %v", o.path, err)
	}
	o.f.Close()
	if err := os.Rename(o.f.Name(), o.path); err != nil {
		os.Remove(o.f.Name())
		return fmt.Errorf("-o %s: %v", o.path, unwrapPathErr(err))
	}
	return nil
}

// Discard removes an uncommitted temporary file; safe to call at any time.
func (o *output) Discard() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.f == nil || o.done {
		return
	}
	o.done = true
	o.f.Close()
	os.Remove(o.f.Name())
}

// settle resolves the output flags once the plan is known, for the
// commands that run one: -j is --output-format json, the results flags go
// into the plan, per-request CSV rows on stdout turn the live view off.
// It reports whether the text report is colored.
func (f *outputFlags) settle(r *resultFlags, p *plan.Plan) (color bool, err error) {
	if f.json {
		f.format = "json"
	}
	if err := applyResultFlags(r, p); err != nil {
		return false, err
	}
	if rowsOnStdout(f.format, f.output) {
		f.noTUI = true
	}
	return !f.noColor && os.Getenv("NO_COLOR") == "" && f.output == "" && term.IsTerminal(int(os.Stdout.Fd())), nil
}
