package tui

import (
	"testing"
	"time"
)

// BenchmarkFrame is one frame between collector ticks: header only.
func BenchmarkFrame(b *testing.B) {
	start := time.Unix(1_700_000_000, 0)
	cfg := baseConfig()
	cfg.Color = true
	m := New(cfg)
	m.Update(SourceMsg{newFakeSource(60, start)})
	m.width, m.height = 120, 40
	m.View()
	b.ResetTimer()
	for i := range b.N {
		m.Update(tickMsg(start.Add(60*time.Second + time.Duration(i)*time.Millisecond)))
		m.View()
	}
}

// BenchmarkTick is a frame right after a collector tick: the whole screen.
func BenchmarkTick(b *testing.B) {
	start := time.Unix(1_700_000_000, 0)
	cfg := baseConfig()
	cfg.Color = true
	src := newFakeSource(60, start)
	m := New(cfg)
	m.Update(SourceMsg{src})
	m.width, m.height = 120, 40
	b.ResetTimer()
	for i := range b.N {
		src.addSecond(4000, 0.3)
		m.Update(tickMsg(start.Add(time.Duration(60+i) * time.Second)))
		m.View()
	}
}
