// Package tui is hail's live terminal view: a bubbletea program that
// redraws at a fixed frame rate from the run's collector. It reads only
// what the collector has already gathered (once per collector tick, about
// once a second), so the engine's hot path never waits for it.
package tui

import (
	"io"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// Config describes the run being shown and how to show it.
type Config struct {
	// Method and Target name what is loaded, e.g. GET http://127.0.0.1:8080/.
	Method, Target string
	// Connections is -c.
	Connections int
	// Requests (-n) or Duration (-z) bound the run, for the progress bar.
	Requests uint64
	Duration time.Duration
	// Rate is -q (0: none); Open says the open model is in use.
	Rate float64
	Open bool
	// Cores is how many CPUs the generator may use (stats.Cores()).
	Cores int
	// FPS is the redraw rate (default 16).
	FPS int
	// Unit is -u: the initial latency unit ("" for automatic).
	Unit string
	// Color enables colors; false honours --no-color and NO_COLOR.
	Color bool
	// Stop is called on the first q or Ctrl-C: it ends the run, which
	// then prints its report.
	Stop func()
	// StepNames are a scenario's steps, in the collector's order; with
	// more than one, the view shows a row per step.
	StepNames []string
	// Scenario describes a scenario run for the title line and the step
	// rows; nil for a plain run.
	Scenario *Scenario
	// TargetPID is --target-pid's process (0: none): the view shows its
	// RSS and CPU, now and over time, from the per-second series.
	TargetPID int
	// Stage, if set, says what the stages of a plain run (hail llm
	// --stages) ask for elapsed into the run, for the title line; a
	// scenario's are Scenario.Stage.
	Stage func(elapsed time.Duration) Stage
	// SLO are the token streams' objectives as --slo gives them
	// ("ttft=500ms,tpot=50ms"; "": none): the view shows goodput
	// against them.
	SLO string
}

// Scenario is what the view shows of a scenario beyond its steps' numbers.
type Scenario struct {
	// Name is the scenario's name (or file).
	Name string
	// Mix is the expected share of requests by method, such as
	// "POST 70% · GET 20% · DELETE 10%".
	Mix string
	// Stage, if set, says what the stages ask for elapsed into the run.
	Stage func(elapsed time.Duration) Stage
	// Counters, if set, returns a step's capture misses and yields so far;
	// the view calls it once per collector tick.
	Counters func(step int) (misses, yields int64)
	// Targets, if set, names the servers of a scenario that sends to
	// several ("rest http://…, grpc http://…"): the header shows it in
	// place of the one URL.
	Targets string
}

// Stage is the stage in progress: its number (from 1) of Of, the target
// now and at the stage's end, and what is ramped ("connections", "req/s").
type Stage struct {
	Index, Of   int
	Now, Target float64
	Unit        string
}

// SourceMsg hands the view the run's collector once the run has started.
type SourceMsg struct{ Source Source }

// tickMsg is one frame.
type tickMsg time.Time

// Windows are the charts' time windows; 0 is the whole run.
var windows = []time.Duration{10 * time.Second, 30 * time.Second, time.Minute, 5 * time.Minute, 15 * time.Minute, 0}

// Model is the bubbletea model of the live view.
type Model struct {
	cfg    Config
	src    Source
	smp    sampler
	data   Data
	ver    int // bumped whenever data changes
	now    time.Time
	width  int
	height int

	help     bool
	window   int // index into windows
	unit     int // index into units
	stopping bool
	aborted  bool

	st    styles
	cache bodyCache
	title struct { // the title line, cached: it changes with the state only
		w     int
		state string
		stage string
		line  string
	}
}

// New returns the model for cfg.
func New(cfg Config) *Model {
	if cfg.FPS <= 0 {
		cfg.FPS = 16
	}
	if cfg.Cores <= 0 {
		cfg.Cores = 1
	}
	r := lipgloss.NewRenderer(io.Discard)
	if cfg.Color {
		r.SetColorProfile(termenv.ANSI)
	} else {
		r.SetColorProfile(termenv.Ascii)
	}
	return &Model{cfg: cfg, window: len(windows) - 1, unit: unitIndex(cfg.Unit), st: newStyles(r, cfg.Color), now: time.Now(),
		smp: sampler{names: cfg.StepNames, extra: cfg.scenarioCounters()}}
}

// scenarioCounters is the scenario's step counters, or nil.
func (cfg *Config) scenarioCounters() func(int) (int64, int64) {
	if cfg.Scenario == nil {
		return nil
	}
	return cfg.Scenario.Counters
}

// Aborted reports whether the user pressed q or Ctrl-C a second time:
// hail should then exit at once, as after a second SIGINT.
func (m *Model) Aborted() bool { return m.aborted }

// Init starts the frame clock.
func (m *Model) Init() tea.Cmd { return m.tick() }

func (m *Model) tick() tea.Cmd {
	return tea.Tick(time.Second/time.Duration(m.cfg.FPS), func(t time.Time) tea.Msg { return tickMsg(t) })
}

// Update handles frames, the collector's arrival, resizes and keys.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tickMsg:
		m.now = time.Time(msg)
		m.refresh()
		return m, m.tick()
	case SourceMsg:
		m.src = msg.Source
		if l, ok := m.src.(liveStreams); ok { // TTFT and ITL each second, not only at the end
			l.LiveStreams()
		}
		m.refresh()
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
	case tea.KeyMsg:
		return m, m.key(msg.String())
	}
	return m, nil
}

// refresh copies the collector's state when it has ticked since last time.
func (m *Model) refresh() {
	if m.src != nil && m.smp.sample(m.src, &m.data) {
		m.ver++
	}
}

// key applies one key press.
func (m *Model) key(k string) tea.Cmd {
	switch k {
	case "q", "Q", "ctrl+c":
		if m.stopping {
			m.aborted = true
			return tea.Quit
		}
		m.stopping = true
		if m.cfg.Stop != nil {
			m.cfg.Stop()
		}
	case "?", "h", "f1":
		m.help = !m.help
	case "esc":
		m.help = false
	case "w", "]", "+", "right":
		m.window = (m.window + 1) % len(windows)
	case "W", "[", "-", "left":
		m.window = (m.window + len(windows) - 1) % len(windows)
	case "u":
		m.unit = (m.unit + 1) % len(units)
	case "U":
		m.unit = (m.unit + len(units) - 1) % len(units)
	}
	return nil
}

// elapsed is how long the run has been going, as of the last frame.
func (m *Model) elapsed() time.Duration {
	if m.src == nil {
		return 0
	}
	return max(m.now.Sub(m.src.Start()), 0)
}

// latUnit is the unit latencies show in now: automatically, the one
// that shows the current p99 with at most three digits before the point.
func (m *Model) latUnit() string {
	if u := units[m.unit]; u != "auto" {
		return u
	}
	p := int64(m.data.Last().P99)
	if p == 0 {
		p = m.data.RunP99
	}
	return autoUnit(p)
}
