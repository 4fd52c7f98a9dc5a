package tui

import (
	"math"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/hail-loadgen/hail/internal/stats"
)

// fakeSource is a synthetic collector: secs seconds of a run at about
// 4000 requests/s with ~1 ms latencies, a few 503s and resets.
type fakeSource struct {
	start  time.Time
	totals *stats.Totals
	series []stats.Second
	views  int
}

func newFakeSource(secs int, start time.Time) *fakeSource {
	f := &fakeSource{start: start, totals: stats.NewTotals()}
	for range secs {
		f.addSecond(4000, 0.3)
	}
	return f
}

// addSecond appends one second of n requests at cpu cores.
func (f *fakeSource) addSecond(n int, cpu float64) {
	i := len(f.series)
	wob := 1 + 0.2*math.Sin(float64(i)/2)
	req := int64(float64(n) * wob)
	s := stats.Second{Index: i, Span: time.Second, Requests: req, Errors: 3, WireBytes: req * 120, SentBytes: req * 60,
		P50: time.Duration(1.1e6 * wob), P90: time.Duration(1.3e6 * wob), P99: time.Duration(1.9e6 * wob), P999: time.Duration(3e6 * wob), Max: time.Duration(7e6 * wob),
		InFlight: 4, ConnsOpen: 4, CPU: cpu}
	f.series = append(f.series, s)
	f.totals.Status[200] += req - 13
	f.totals.Status[503] += 10
	f.totals.Errors[stats.ErrReset] += 3
	f.totals.WireBytes += s.WireBytes
	f.totals.SentBytes += s.SentBytes
	for k := range 200 {
		f.totals.LatencyOK.RecordValue(int64(900_000 + k*2_000 + i*1000))
	}
	f.totals.LatencyOK.RecordValue(7_000_000)
}

func (f *fakeSource) Start() time.Time { return f.start }
func (f *fakeSource) View(fn func(*stats.Totals, []stats.Second)) {
	f.views++
	fn(f.totals, f.series)
}

// newTestModel returns a model showing src at w×h, as of now.
func newTestModel(t *testing.T, cfg Config, src Source, w, h int, now time.Time) *Model {
	t.Helper()
	m := New(cfg)
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	if src != nil {
		m.Update(SourceMsg{src})
	}
	m.Update(tickMsg(now))
	return m
}

func baseConfig() Config {
	return Config{Method: "GET", Target: "http://127.0.0.1:8080/?delay=1ms", Connections: 4, Duration: 20 * time.Second, Cores: 2, FPS: 16}
}

// checkScreen asserts the screen fits w×h and returns it without escapes.
func checkScreen(t *testing.T, view string, w, h int) string {
	t.Helper()
	lines := strings.Split(view, "\n")
	if len(lines) > h {
		t.Errorf("%d×%d: %d lines", w, h, len(lines))
	}
	for i, l := range lines {
		if n := ansi.StringWidth(l); n > w {
			t.Errorf("%d×%d: line %d is %d cells wide: %q", w, h, i, n, ansi.Strip(l))
		}
	}
	return ansi.Strip(view)
}

func TestViewSizes(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	for _, sz := range [][2]int{{80, 24}, {120, 40}, {40, 12}, {200, 60}, {60, 18}, {59, 30}, {100, 20}} {
		w, h := sz[0], sz[1]
		for _, color := range []bool{false, true} {
			cfg := baseConfig()
			cfg.Color = color
			src := newFakeSource(9, start)
			m := newTestModel(t, cfg, src, w, h, start.Add(9400*time.Millisecond))
			view := m.View()
			if !color && strings.Contains(view, "\x1b[") {
				t.Errorf("%d×%d: escape codes with colors off", w, h)
			}
			if color && !strings.Contains(view, "\x1b[") {
				t.Errorf("%d×%d: no colors with colors on", w, h)
			}
			screen := checkScreen(t, view, w, h)
			want := []string{"hail", "47", "ETA", "p50", "p99", "max", "q stop"}
			if !m.compact() {
				want = append(want, "Requests/s", "Latency (ms)", "Latency histogram (ms)", "Status", "[200]", "[503]",
					"connection reset by", "conns", "in flight", "CPU", "15% of 2 cores", "lag p99", "queued", "p99.9", "OK: the target")
			} else {
				want = append(want, "req/s", "200:", "cpu 15%")
			}
			for _, s := range want {
				if !strings.Contains(screen, s) {
					t.Errorf("%d×%d (color %v): %q missing from\n%s", w, h, color, s, screen)
				}
			}
			if testing.Verbose() && !color {
				t.Logf("%d×%d:\n%s", w, h, screen)
			}
		}
	}
}

// Every size, even absurd ones, renders without panicking and fits.
func TestViewNoPanicAnySize(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	for w := 1; w <= 130; w += 11 {
		for h := 1; h <= 45; h += 7 {
			for _, secs := range []int{0, 1, 3} {
				var src Source
				if secs > 0 {
					src = newFakeSource(secs, start)
				}
				m := newTestModel(t, baseConfig(), src, w, h, start.Add(time.Duration(secs)*time.Second))
				checkScreen(t, m.View(), w, h)
				m.key("?")
				checkScreen(t, m.View(), w, h)
			}
		}
	}
}

// Before the collector arrives, and before its first tick, the view says so.
func TestViewStarting(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	m := newTestModel(t, baseConfig(), nil, 80, 24, start)
	if s := checkScreen(t, m.View(), 80, 24); !strings.Contains(s, "starting") {
		t.Errorf("no starting state:\n%s", s)
	}
	m.Update(SourceMsg{newFakeSource(0, start)})
	s := checkScreen(t, m.View(), 80, 24)
	for _, want := range []string{"waiting for the first second", "no responses yet"} {
		if !strings.Contains(s, want) {
			t.Errorf("%q missing:\n%s", want, s)
		}
	}
}

// Between collector ticks a frame redraws only the header: the panels
// come from the cache and the collector is not copied again.
func TestFramesReuseBody(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	src := newFakeSource(5, start)
	m := newTestModel(t, baseConfig(), src, 120, 40, start.Add(5*time.Second))
	first := m.View()
	ver := m.ver
	m.Update(tickMsg(start.Add(5500 * time.Millisecond)))
	second := m.View()
	if m.ver != ver {
		t.Errorf("data version changed without a collector tick")
	}
	if first == second {
		t.Errorf("the progress line did not move between frames")
	}
	fl, sl := strings.Split(first, "\n"), strings.Split(second, "\n")
	if strings.Join(fl[2:], "\n") != strings.Join(sl[2:], "\n") {
		t.Errorf("panels changed between frames without new data")
	}
	src.addSecond(4000, 0.3)
	m.Update(tickMsg(start.Add(6 * time.Second)))
	if m.ver != ver+1 {
		t.Errorf("new second not picked up")
	}
	if len(m.data.Series) != 6 {
		t.Errorf("series has %d entries, want 6", len(m.data.Series))
	}
}

// When the generator is the bottleneck the view says so plainly.
func TestGeneratorLimitedWarning(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	src := newFakeSource(0, start)
	for range 5 {
		src.addSecond(4000, 1.9) // 95% of 2 cores
	}
	for _, sz := range [][2]int{{80, 24}, {120, 40}, {40, 12}} {
		m := newTestModel(t, baseConfig(), src, sz[0], sz[1], start.Add(5*time.Second))
		s := checkScreen(t, m.View(), sz[0], sz[1])
		if !strings.Contains(s, "GENERATOR-LIMITED") {
			t.Errorf("%v: no warning:\n%s", sz, s)
		}
		if !m.compact() && !strings.Contains(s, "the generator, not the target, is the bottleneck") {
			t.Errorf("%v: no bottleneck sentence:\n%s", sz, s)
		}
	}
	// Other processes' share, which the warning cites, is never cut off
	// the panel: at 120 columns it gets a line of its own.
	for i := range src.series {
		src.series[i].Others = 0.86
	}
	for _, w := range []int{120, 200} {
		m := newTestModel(t, baseConfig(), src, w, 40, start.Add(5*time.Second))
		s := checkScreen(t, m.View(), w, 40)
		if !strings.Contains(s, "others 86%") && !strings.Contains(s, "others    86% of its CPUs") {
			t.Errorf("%d columns: others' 86%% is not in the generator panel:\n%s", w, s)
		}
	}
	// Open model under its -q target with schedule lag.
	cfg := baseConfig()
	cfg.Open, cfg.Rate = true, 10000
	src = newFakeSource(4, start)
	src.series[3].LagP99 = 5e6
	m := newTestModel(t, cfg, src, 120, 40, start.Add(4*time.Second))
	hl := m.health()
	if !hl.Limited || len(hl.Reasons) != 2 {
		t.Errorf("open model health = %+v, want lag and rate reasons", hl)
	} else if idle := hl.CPU < 0.5; idle != strings.Contains(hl.Reasons[0], "the OS wakes hail late") {
		t.Errorf("CPU %.2f: lag reason %q (idle lateness named only when idle)", hl.CPU, hl.Reasons[0])
	}
	// Every connection busy and requests waiting for them: the target.
	src = newFakeSource(4, start)
	src.series[3].WaitP99 = 20e6
	m = newTestModel(t, cfg, src, 120, 40, start.Add(4*time.Second))
	if hl := m.health(); hl.Limited || hl.Bottleneck != "target" {
		t.Errorf("backpressure health = %+v, want the target named, not the generator", hl)
	} else if s := checkScreen(t, m.View(), 120, 40); !strings.Contains(s, "TARGET-BOUND") {
		t.Errorf("no TARGET-BOUND:\n%s", s)
	}
	// A healthy open-model run is not flagged.
	cfg.Rate = 4000
	src = newFakeSource(4, start)
	m = newTestModel(t, cfg, src, 120, 40, start.Add(4*time.Second))
	if hl := m.health(); hl.Limited {
		t.Errorf("healthy run flagged: %+v", hl)
	}
}

// Scenario steps get their own rows when present.
func TestStepsPanel(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	m := newTestModel(t, baseConfig(), newFakeSource(3, start), 120, 40, start.Add(3*time.Second))
	m.data.Steps = []StepRow{{Name: "login", Requests: 10, RPS: 100, P50: 1e6, P99: 2e6}, {Name: "browse", Requests: 30, RPS: 300, P50: 1e6, P99: 3e6}}
	m.ver++
	s := checkScreen(t, m.View(), 120, 40)
	for _, want := range []string{"Steps", "login", "browse"} {
		if !strings.Contains(s, want) {
			t.Errorf("%q missing:\n%s", want, s)
		}
	}
}

// A -n run shows requests done and an ETA from the average rate.
func TestProgressRequests(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	cfg := baseConfig()
	cfg.Duration, cfg.Requests = 0, 100_000
	src := newFakeSource(5, start)
	m := newTestModel(t, cfg, src, 120, 40, start.Add(5*time.Second))
	s := checkScreen(t, m.View(), 120, 40)
	want := fmtInt(m.data.Requests) + " / 100,000 requests"
	if !strings.Contains(s, want) || !strings.Contains(s, "ETA") {
		t.Errorf("progress missing %q or ETA:\n%s", want, s)
	}
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{fmtInt(1234567), "1,234,567"}, {fmtInt(12), "12"}, {fmtInt(-1234), "-1,234"},
		{fmtSI(950), "950"}, {fmtSI(12345), "12.3k"}, {fmtSI(4.56e6), "4.56M"},
		{fmtLat(1_234_567, "ms"), "1.23"}, {fmtLat(0, "ms"), "-"}, {fmtLat(25_000, "µs"), "25.0"},
		{fmtBytes(512), "512 B"}, {fmtBytes(1536), "1.50 KiB"},
		{fmtSeconds(45), "45s"}, {fmtSeconds(120), "2m"}, {fmtSeconds(150), "2m30"},
		{fmtElapsed(9400 * time.Millisecond), "9.4s"}, {fmtElapsed(125 * time.Second), "2m05s"},
		{autoUnit(500), "ns"}, {autoUnit(25_000), "µs"}, {autoUnit(1_500_000), "ms"}, {autoUnit(2e9), "s"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
	for _, tc := range [][2]float64{{0, 1}, {0.7, 0.8}, {1, 1}, {1.1, 1.5}, {2.2, 2.5}, {3, 3}, {7, 8}, {4100, 5000}, {9000, 10000}} {
		if got := niceCeil(tc[0]); got != tc[1] {
			t.Errorf("niceCeil(%v) = %v, want %v", tc[0], got, tc[1])
		}
	}
}

// scenarioConfig is baseConfig for a scenario with connection stages and a
// monitored target process.
func scenarioConfig() Config {
	cfg := baseConfig()
	cfg.StepNames = []string{"create", "query", "destroy"}
	cfg.TargetPID = 4242
	cfg.Scenario = &Scenario{Name: "vm-lifecycle", Mix: "POST 70% · GET 20% · DELETE 10%",
		Stage: func(el time.Duration) Stage {
			return Stage{Index: 2, Of: 3, Now: 40 + el.Seconds(), Target: 64, Unit: "connections"}
		},
		Counters: func(step int) (int64, int64) { return int64(step), int64(10 * step) }}
	return cfg
}

// A scenario's view fits every size: its title (name, method mix, stage
// now / planned), its step rows (with the unit in the header, checks,
// status codes, misses and yields) and the target panel.
func TestScenarioViewSizes(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	for _, sz := range [][2]int{{80, 24}, {120, 40}, {160, 48}, {200, 60}, {40, 12}, {100, 30}} {
		w, h := sz[0], sz[1]
		src := newFakeSource(9, start)
		for i := range src.series {
			src.series[i].TargetRSS, src.series[i].TargetCPU = int64(100+i)<<20, 0.5
		}
		m := newTestModel(t, scenarioConfig(), src, w, h, start.Add(9400*time.Millisecond))
		m.data.Steps = []StepRow{
			{Name: "create", Requests: 700, RPS: 70, P50: 1e6, P99: 2e6, Status: []Count{{"201", 700}}},
			{Name: "query", Requests: 200, Errors: 5, Checks: 5, RPS: 20, P50: 1e6, P99: 3e6, Status: []Count{{"200", 190}, {"404", 5}}, Yields: 3},
			{Name: "destroy", Requests: 100, RPS: 10, P50: 1e6, P99: 2e6, Status: []Count{{"204", 100}}, Misses: 2},
		}
		m.ver++
		screen := checkScreen(t, m.View(), w, h)
		want := []string{"hail", "vm-lifecycle"}
		if !m.compact() {
			want = append(want, "stage 2/3: 49 / 64 connections", "Steps", "create", "query", "destroy", "p50 ms", "p99 ms", "201×700", "404×5",
				"Target process (pid 4242)", "RSS 108 MiB", "CPU 50% of a core")
			if w >= 100 {
				want = append(want, "checks")
			}
			if w >= 120 {
				want = append(want, "POST 70% · GET 20% · DELETE 10%")
			}
		} else {
			want = append(want, "target rss 108 MiB")
		}
		for _, s := range want {
			if !strings.Contains(screen, s) {
				t.Errorf("%d×%d: %q missing from\n%s", w, h, s, screen)
			}
		}
		if testing.Verbose() {
			t.Logf("%d×%d:\n%s", w, h, screen)
		}
	}
}

// Requests that were sent and failed (timeouts) show in the latency
// panel: every sent request's p50, p99 and max beside the responses', with
// how many failed and how many the run's end cut off.
func TestLatencyPanelAllSent(t *testing.T) {
	t.Parallel()
	start := time.Unix(1_700_000_000, 0)
	src := newFakeSource(3, start)
	for range 5 {
		src.totals.Failed.RecordValue(500_000_000) // timed out at -t 500ms
	}
	src.totals.Errors[stats.ErrTimeout] += 5
	src.totals.Errors[stats.ErrAborted] += 2
	src.totals.Errors[stats.ErrConnectRefused] += 3
	src.totals.NotSent += 3
	m := newTestModel(t, baseConfig(), src, 120, 40, start.Add(3*time.Second))
	s := checkScreen(t, m.View(), 120, 40)
	for _, want := range []string{"all sent: p50", "max 500", "5 failed, 2 cut off", "not sent"} {
		if !strings.Contains(s, want) {
			t.Errorf("%q missing:\n%s", want, s)
		}
	}
	if m.data.AllMax < 500_000_000 || m.data.AllP99 >= 500_000_000 || m.data.Failed != 5 {
		t.Errorf("all sent p99 %d, max %d, failed %d: want the 5 timeouts (of ~600) above p99, at the max", m.data.AllP99, m.data.AllMax, m.data.Failed)
	}
}
