package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/spf13/pflag"
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
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("-o %s: cannot write there: %v", path, unwrapPathErr(err))
	}
	o := &output{f: f, path: path}
	signals.mu.Lock()
	signals.out = o // removed if a second signal ends hail before the run
	signals.mu.Unlock()
	return o, nil
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

// outputFlags are the flags that shape the report and the live view, the same for the load and
// run commands.
type outputFlags struct {
	noTUI        bool   // --no-tui
	fps          int    // --fps
	json         bool   // -j/--json: --output-format json
	format       string // --output-format
	output       string // -o/--output: a file instead of stdout
	unit         string // -u/--time-unit; "" chooses from the average
	noColor      bool   // --no-color
	successSplit bool   // --stats-success-breakdown
}

// defaultOutputFlags are outputFlags' defaults: the text report and the live view at defaultFPS.
func defaultOutputFlags() outputFlags { return outputFlags{format: "text", fps: defaultFPS} }

// addOutputFlags declares the outputFlags on fl; formatHelp describes --output-format's values.
func addOutputFlags(fl *pflag.FlagSet, f *outputFlags, formatHelp string) {
	fl.BoolVar(&f.noTUI, "no-tui", false, "no live view; a one-line progress on stderr when it is a terminal")
	fl.Var(fpsValue{&f.fps}, "fps", "live view refresh rate, frames per second")
	fl.BoolVarP(&f.json, "json", "j", false, "same as --output-format json")
	fl.Var(choiceValue{&f.format, loadFormats}, "output-format", formatHelp)
	fl.StringVarP(&f.output, "output", "o", "", "write the report to this file (atomically) instead of stdout")
	fl.VarP(choiceValue{&f.unit, []string{"ns", "us", "ms", "s", "m", "h"}}, "time-unit", "u", "time unit of the text report (default: chosen from the average)")
	fl.BoolVar(&f.noColor, "no-color", false, "no colors (also when NO_COLOR is set)")
	fl.BoolVar(&f.successSplit, "stats-success-breakdown", false, "also break latency down into 2xx and other responses")
}
