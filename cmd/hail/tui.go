package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"golang.org/x/term"

	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/run"
	"github.com/hail-loadgen/hail/internal/schedule"
	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/internal/tui"
)

// The live view (internal/tui) shows while a load runs when stdout is a
// terminal and --no-tui is not given. It reads only the collector's
// snapshots; when the run ends it quits, the terminal is restored, and the
// report prints exactly as with --no-tui (to stdout, or to -o's file).

// defaultFPS is --fps's default.
const defaultFPS = 16

// fpsValue is --fps: frames per second, 1 to 120.
type fpsValue struct{ n *int }

func (v fpsValue) String() string { return strconv.Itoa(*v.n) }
func (v fpsValue) Type() string   { return "N" }
func (v fpsValue) Set(s string) error {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 1 || n > 120 {
		return fmt.Errorf("give 1 to 120 frames per second")
	}
	*v.n = n
	return nil
}

var (
	restoreMu sync.Mutex
	restoreFn func()
)

// restoreTerminal undoes the live view's terminal modes at once, if it
// shows; the second-interrupt path calls it before exiting without waiting.
func restoreTerminal() {
	restoreMu.Lock()
	defer restoreMu.Unlock()
	if restoreFn != nil {
		restoreFn()
		restoreFn = nil
	}
}

func setRestoreTerminal(f func()) {
	restoreMu.Lock()
	restoreFn = f
	restoreMu.Unlock()
}

// wantTUI says whether the live view should show: stdout is a terminal,
// --no-tui is not given and a report follows the run.
func wantTUI(f *outputFlags) bool {
	if f.noTUI || f.format == "quiet" {
		return false
	}
	return term.IsTerminal(int(os.Stdout.Fd()))
}

// liveView is the live view of one run.
type liveView struct {
	prog  *tea.Program
	model *tui.Model
	tty   *os.File // the keyboard when it is not stdin, opened here
	done  chan struct{}
}

// startLiveView starts the live view on the terminal; stop ends the run
// (first q or Ctrl-C). It returns nil, having changed nothing, when there
// is no terminal to read keys from: hail then runs as with --no-tui.
// liveExtras are what the view shows of a run beyond its plan: token
// streams' objectives (--slo; "": none), for the goodput it shows, and
// the stage in progress of a plain run with stages (nil: none).
type liveExtras struct {
	slo   string
	stage func(time.Duration) tui.Stage
}

// extrasOf are w's live extras (nil w: none).
func extrasOf(w *run.Workload) liveExtras {
	var x liveExtras
	if w == nil {
		return x
	}
	if w.Stream != nil {
		x.slo = w.Stream.SLO.String()
	}
	if len(w.Stages) > 0 {
		r, unit := schedule.Ramp{Stages: w.Stages}, "req/s"
		if w.Connections != nil {
			r, unit = *w.Connections, "connections"
		}
		x.stage = func(el time.Duration) tui.Stage {
			i, now, target := r.StageAt(el)
			return tui.Stage{Index: i, Of: len(r.Stages), Now: now, Target: target, Unit: unit}
		}
	}
	return x
}

func startLiveView(p *plan.Plan, open bool, f *outputFlags, stop func(), out *output, steps []string, scen *tui.Scenario, pid int, x liveExtras) *liveView {
	lv := &liveView{done: make(chan struct{})}
	in := os.Stdin
	if !term.IsTerminal(int(in.Fd())) {
		tty, err := os.Open("/dev/tty")
		if err != nil {
			return nil
		}
		if !term.IsTerminal(int(tty.Fd())) {
			tty.Close()
			return nil
		}
		in, lv.tty = tty, tty
	}
	saved, err := term.GetState(int(in.Fd()))
	if err != nil {
		lv.closeTTY()
		return nil
	}
	target := redactedURL(p.URL, false)
	if scen != nil && scen.Targets != "" {
		target = scen.Targets
	}
	lv.model = tui.New(tui.Config{
		Method: p.Method, Target: target, Connections: p.Connections,
		Requests: p.Requests, Duration: p.Duration, Rate: p.Rate, Open: open,
		Cores: stats.Cores(), FPS: f.fps, Unit: f.unit,
		Color: !f.noColor && os.Getenv("NO_COLOR") == "",
		Stop:  stop, StepNames: steps, Scenario: scen, TargetPID: pid, SLO: x.slo, Stage: x.stage,
	})
	lv.prog = tea.NewProgram(lv.model,
		tea.WithInput(in), tea.WithOutput(os.Stdout), tea.WithAltScreen(),
		tea.WithFPS(f.fps), tea.WithoutSignalHandler())
	setRestoreTerminal(func() {
		os.Stdout.WriteString("\x1b[?2004l\x1b[?25h\x1b[?1049l")
		term.Restore(int(in.Fd()), saved)
	})
	go func() {
		defer close(lv.done)
		lv.prog.Run()
		if lv.model.Aborted() { // q or Ctrl-C twice: exit at once, as a second SIGINT does
			out.Discard()
			fmt.Fprintln(os.Stderr, "hail: interrupted twice, exiting at once")
			os.Exit(130)
		}
	}()
	return lv
}

// observe hands the view the run's collector; it never blocks the run.
func (lv *liveView) observe(c *stats.Collector) {
	go lv.prog.Send(tui.SourceMsg{Source: c})
}

// close quits the view and waits until the terminal is restored.
func (lv *liveView) close() {
	lv.prog.Quit()
	select {
	case <-lv.done:
	case <-time.After(5 * time.Second):
		lv.prog.Kill()
		select {
		case <-lv.done:
		case <-time.After(5 * time.Second):
			restoreTerminal()
		}
	}
	setRestoreTerminal(nil)
	lv.closeTTY()
}

func (lv *liveView) closeTTY() {
	if lv.tty != nil {
		lv.tty.Close()
	}
}
