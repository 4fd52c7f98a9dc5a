package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"golang.org/x/term"

	"github.com/hail-loadgen/hail/internal/plan"
)

// output is where the report goes: stdout, or a file written under a
// temporary name and renamed into place only when complete, so no reader
// ever sees a half-written report. -o is checked before the run (a
// directory, a directory that does not exist or cannot be written to is
// refused then, not after the load), but nothing is created until the
// first write: a run that ends before it leaves nothing behind. A path
// that is not a regular file (/dev/null, /dev/stdout, a FIFO) is written
// in place, never replaced.
type output struct {
	mu     sync.Mutex
	f      *os.File
	path   string // final path; "" for stdout
	direct bool   // path is a device or a FIFO: written in place
	done   bool
	err    error // creating the file failed
	stdout io.Writer
}

// openOutput returns the output for -o path, or for stdout when path is
// "".
func openOutput(path string, stdout io.Writer) (*output, error) {
	if path == "" {
		return &output{stdout: stdout}, nil
	}
	o := &output{path: path}
	if err := o.check(); err != nil {
		return nil, err
	}
	signals.mu.Lock()
	signals.out = o // removed if hail exits at once
	signals.mu.Unlock()
	return o, nil
}

// check refuses an -o the report could not be written to, before
// anything is sent: a directory, a missing directory, one hail may not
// create files in (a temporary file is created there and removed).
func (o *output) check() error {
	path := o.path
	if st, err := os.Stat(path); err == nil {
		switch {
		case st.IsDir():
			return fmt.Errorf("-o %s: is a directory: name a file, e.g. -o %s", path, filepath.Join(path, "result.json"))
		case !st.Mode().IsRegular():
			o.direct = true // a device or a FIFO: opened when written
			return nil
		}
	}
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("-o %s: directory %s does not exist", path, dir)
	}
	f, err := createTemp(dir, "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return fmt.Errorf("-o %s: cannot write there: %v", path, unwrapPathErr(err))
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// open creates the temporary file (or opens a device) on the first write.
func (o *output) open() (*os.File, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case o.f != nil || o.err != nil:
		return o.f, o.err
	case o.done:
		return nil, fmt.Errorf("-o %s: discarded", o.path)
	case o.direct:
		o.f, o.err = os.OpenFile(o.path, os.O_WRONLY|os.O_TRUNC, 0)
	default:
		o.f, o.err = createTemp(filepath.Dir(o.path), "."+filepath.Base(o.path)+".tmp-")
		if o.err == nil {
			if st, err := os.Stat(o.path); err == nil && st.Mode().IsRegular() {
				_ = o.f.Chmod(st.Mode().Perm()) // replacing a file keeps its permissions
			}
		}
	}
	if o.err != nil {
		o.err = fmt.Errorf("-o %s: cannot write there: %v", o.path, unwrapPathErr(o.err))
	}
	return o.f, o.err
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
	if o.path == "" {
		return o.stdout.Write(b)
	}
	f, err := o.open()
	if err != nil {
		return 0, err
	}
	return f.Write(b)
}

// Commit moves the finished file into place (creating it empty when
// nothing was written: -o with the quiet format).
func (o *output) Commit() error {
	if o.path == "" {
		return nil
	}
	if _, err := o.open(); err != nil {
		return err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.done {
		return nil
	}
	o.done = true
	if o.direct {
		return o.f.Close()
	}
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
	if o.done {
		return
	}
	o.done = true
	if o.f == nil {
		return
	}
	o.f.Close()
	if !o.direct {
		os.Remove(o.f.Name())
	}
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
