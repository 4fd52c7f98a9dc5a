package main

import (
	"github.com/spf13/pflag"

	"github.com/hail-loadgen/hail/internal/report"
)

// outputFlags are the flags that shape the report and the live view, the
// same for the load and run commands.
type outputFlags struct {
	noTUI        bool   // --no-tui
	fps          int    // --fps
	json         bool   // -j/--json: --output-format json
	format       string // --output-format
	output       string // -o/--output: a file instead of stdout
	unit         string // -u/--time-unit; "" chooses from the slowest request
	noColor      bool   // --no-color, --disable-color
	successSplit bool   // --stats-success-breakdown
}

// defaultOutputFlags are outputFlags' defaults: the text report and the live view at defaultFPS.
func defaultOutputFlags() outputFlags { return outputFlags{format: "text", fps: defaultFPS} }

// addOutputFlags declares the outputFlags on fl; formatHelp describes --output-format's values.
func addOutputFlags(fl *pflag.FlagSet, f *outputFlags, formatHelp string) {
	fl.BoolVar(&f.noTUI, "no-tui", false, "no live view; a one-line progress on stderr when it is a terminal")
	fl.Var(fpsValue{&f.fps}, "fps", "live view refresh rate, frames per second")
	fl.BoolVar(&f.noColor, "no-color", false, "no colours (also --disable-color, and when NO_COLOR is set)")
	fl.BoolVar(&f.noColor, "disable-color", false, "same as --no-color")
	fl.BoolVar(&f.successSplit, "stats-success-breakdown", false, "also break latency down into 2xx and 4xx + 5xx responses")
	fl.StringVarP(&f.output, "output", "o", "", "write the report to this `FILE` (atomically) instead of stdout")
	fl.Var(choiceValue{&f.format, loadFormats}, "output-format", formatHelp)
	fl.BoolVarP(&f.json, "json", "j", false, "same as --output-format json")
	fl.VarP(choiceValue{&f.unit, report.Units}, "time-unit", "u", "time unit of the text report (default: chosen from the slowest request)")
	_ = fl.MarkHidden("disable-color") // oha's alias, listed with --no-color
	setGroup(fl, groupOutput, "no-tui", "fps", "no-color", "stats-success-breakdown", "output", "output-format", "json", "time-unit")
}

// debugFlags are --debug and the handling of secrets.
type debugFlags struct {
	debug       bool     // --debug
	showSecrets bool     // --show-secrets
	redact      []string // --redact
}

func addDebugFlags(fl *pflag.FlagSet, f *debugFlags) {
	fl.BoolVar(&f.debug, "debug", false, "send one request and print both sides of the exchange")
	fl.BoolVar(&f.showSecrets, "show-secrets", false, "do not redact Authorization, Cookie and Proxy-Authorization in --debug and reports")
	fl.StringArrayVar(&f.redact, "redact", nil, "also redact this `NAME` (header or query parameter) in --debug and reports (repeatable)")
	setGroup(fl, groupDebug, "debug", "show-secrets", "redact")
}
