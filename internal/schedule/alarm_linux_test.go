//go:build linux

package schedule

import (
	"os"
	"testing"
	"time"
)

// Without a timerfd the alarm runs on Go timers: as correct (never early,
// never lost, Close delivers pending), only less precise.
func TestAlarmGoTimerFallback(t *testing.T) {
	base := time.Now()
	a := startAlarm(base, 0, &alarmTimer{fallback: newGoTimer(base)})
	alarmLateness(t, a)
	ch := make(chan struct{}, 1)
	a.At(time.Hour, ch)
	a.Close()
	select {
	case <-ch:
	default:
		t.Fatal("pending wake-up not delivered by Close")
	}
}

// Close releases the timerfd.
func TestAlarmCloseNoFDLeak(t *testing.T) {
	count := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		return len(ents)
	}
	NewAlarm(time.Now(), 0).Close() // warm up the netpoller's own descriptors
	before := count()
	for range 50 {
		NewAlarm(time.Now(), 0).Close()
	}
	if after := count(); after != before {
		t.Fatalf("open descriptors %d -> %d after 50 alarms", before, after)
	}
}
