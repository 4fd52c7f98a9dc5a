package tui

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

func press(m *Model, k string) tea.Cmd {
	var msg tea.KeyMsg
	switch k {
	case "ctrl+c":
		msg = tea.KeyMsg{Type: tea.KeyCtrlC}
	case "esc":
		msg = tea.KeyMsg{Type: tea.KeyEsc}
	case "left":
		msg = tea.KeyMsg{Type: tea.KeyLeft}
	case "right":
		msg = tea.KeyMsg{Type: tea.KeyRight}
	default:
		msg = tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
	}
	_, cmd := m.Update(msg)
	return cmd
}

// isQuit reports whether cmd quits the program.
func isQuit(cmd tea.Cmd) bool {
	if cmd == nil {
		return false
	}
	_, ok := cmd().(tea.QuitMsg)
	return ok
}

// q (or Ctrl-C) stops the run once; pressed again it quits at once.
func TestKeyStop(t *testing.T) {
	for _, k := range []string{"q", "ctrl+c"} {
		stops := 0
		cfg := baseConfig()
		cfg.Stop = func() { stops++ }
		start := time.Unix(1_700_000_000, 0)
		m := newTestModel(t, cfg, newFakeSource(3, start), 80, 24, start.Add(3*time.Second))
		if cmd := press(m, k); isQuit(cmd) {
			t.Errorf("%s: first press quit the view; it should stop the run and keep showing", k)
		}
		if stops != 1 || m.Aborted() {
			t.Errorf("%s: stops = %d, aborted = %v after one press", k, stops, m.Aborted())
		}
		if s := checkScreen(t, m.View(), 80, 24); !strings.Contains(s, "stopping") {
			t.Errorf("%s: no stopping state:\n%s", k, s)
		}
		if cmd := press(m, k); !isQuit(cmd) {
			t.Errorf("%s: second press did not quit", k)
		}
		if stops != 1 || !m.Aborted() {
			t.Errorf("%s: stops = %d, aborted = %v after two presses", k, stops, m.Aborted())
		}
	}
}

// ? shows the keys and hides them again; Esc hides them too.
func TestKeyHelp(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	for _, sz := range [][2]int{{120, 40}, {80, 24}, {40, 12}} {
		m := newTestModel(t, baseConfig(), newFakeSource(3, start), sz[0], sz[1], start.Add(3*time.Second))
		before := checkScreen(t, m.View(), sz[0], sz[1])
		press(m, "?")
		help := checkScreen(t, m.View(), sz[0], sz[1])
		for _, want := range []string{"stop", "window", "unit"} {
			if !strings.Contains(help, want) {
				t.Errorf("%v: help lacks %q:\n%s", sz, want, help)
			}
		}
		if help == before {
			t.Errorf("%v: ? changed nothing", sz)
		}
		press(m, "?")
		if got := checkScreen(t, m.View(), sz[0], sz[1]); got != before {
			t.Errorf("%v: second ? did not restore the panels:\n%s", sz, got)
		}
		press(m, "?")
		press(m, "esc")
		if m.help {
			t.Errorf("%v: Esc did not close the help", sz)
		}
	}
}

// w/W (and ]/[ and the arrows) change the charts' time window.
func TestKeyWindow(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	src := newFakeSource(100, start)
	m := newTestModel(t, baseConfig(), src, 120, 40, start.Add(100*time.Second))
	if got := len(m.windowed()); got != 100 {
		t.Fatalf("default window shows %d seconds, want the whole run (100)", got)
	}
	if s := checkScreen(t, m.View(), 120, 40); !strings.Contains(s, "window: all") {
		t.Errorf("footer lacks the window:\n%s", s)
	}
	press(m, "w") // all → 10s
	if got := len(m.windowed()); got != 10 {
		t.Errorf("after w: %d seconds shown, want 10", got)
	}
	if s := checkScreen(t, m.View(), 120, 40); !strings.Contains(s, "window: 10s") || !strings.Contains(s, "1m3") {
		t.Errorf("10s window not shown:\n%s", s)
	}
	press(m, "]") // 30s
	if got := len(m.windowed()); got != 30 {
		t.Errorf("after ]: %d seconds shown, want 30", got)
	}
	press(m, "right") // 1m
	if got := len(m.windowed()); got != 60 {
		t.Errorf("after →: %d seconds shown, want 60", got)
	}
	press(m, "W") // 30s
	press(m, "[") // 10s
	press(m, "left")
	if windows[m.window] != 0 {
		t.Errorf("W, [ and ← did not go back to the whole run: window %v", windows[m.window])
	}
}

// u/U cycle the time unit: auto, ns, µs, ms, s.
func TestKeyUnit(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	m := newTestModel(t, baseConfig(), newFakeSource(3, start), 120, 40, start.Add(3*time.Second))
	if m.latUnit() != "ms" {
		t.Fatalf("auto unit = %s, want ms for ~1 ms latencies", m.latUnit())
	}
	want := []string{"ns", "µs", "ms", "s", "ms"}
	for i, k := range []string{"u", "u", "u", "u", "U"} {
		press(m, k)
		if got := m.latUnit(); got != want[i] {
			t.Errorf("press %d (%s): unit %s, want %s", i, k, got, want[i])
		}
	}
	press(m, "U")
	s := checkScreen(t, m.View(), 120, 40)
	if !strings.Contains(s, "Latency (µs)") || !strings.Contains(s, "unit: µs") {
		t.Errorf("µs not shown:\n%s", s)
	}
	// -u picks the initial unit.
	cfg := baseConfig()
	cfg.Unit = "us"
	m = newTestModel(t, cfg, newFakeSource(3, start), 120, 40, start.Add(3*time.Second))
	if m.latUnit() != "µs" {
		t.Errorf("-u us: unit %s", m.latUnit())
	}
}

// Resizes re-lay the screen out at the new size.
func TestResize(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	m := newTestModel(t, baseConfig(), newFakeSource(3, start), 120, 40, start.Add(3*time.Second))
	checkScreen(t, m.View(), 120, 40)
	for _, sz := range [][2]int{{80, 24}, {40, 12}, {160, 50}, {80, 24}} {
		m.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		lines := strings.Split(m.View(), "\n")
		checkScreen(t, m.View(), sz[0], sz[1])
		if !m.compact() && len(lines) != sz[1] {
			t.Errorf("%v: %d lines, want the full height", sz, len(lines))
		}
	}
}

// Frames tick at --fps and each frame reads the collector at most once.
func TestTickReadsCollectorOnce(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	src := newFakeSource(3, start)
	m := newTestModel(t, baseConfig(), src, 80, 24, start.Add(3*time.Second))
	before := src.views
	for i := range 16 {
		_, cmd := m.Update(tickMsg(start.Add(3*time.Second + time.Duration(i)*time.Second/16)))
		if cmd == nil {
			t.Fatal("a frame did not schedule the next one")
		}
		m.View()
	}
	if got := src.views - before; got != 16 {
		t.Errorf("16 frames read the collector %d times", got)
	}
}
