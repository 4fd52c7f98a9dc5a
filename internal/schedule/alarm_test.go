package schedule

import (
	"slices"
	"testing"
	"time"
)

// An Alarm wakes far more precisely than a plain Go timer, which oversleeps
// sub-millisecond waits by up to a millisecond (half of that in the median)
// here. The machine is shared, so a stalled test goroutine makes some
// wake-ups late: the check is on the median of 50 waits and gets three
// attempts; a real imprecision fails all three. Waking early fails at once.
func TestAlarmPrecision(t *testing.T) {
	a := NewAlarm(time.Now(), 0)
	defer a.Close()
	const bound = 250 * time.Microsecond
	var median time.Duration
	for attempt := 1; attempt <= 3; attempt++ {
		lates := alarmLateness(t, a)
		slices.Sort(lates)
		median = lates[len(lates)/2]
		t.Logf("attempt %d: lateness over %d waits: median %v, worst %v", attempt, len(lates), median, lates[len(lates)-1])
		if median <= bound {
			return
		}
	}
	t.Errorf("median lateness %v in every attempt, want <= %v", median, bound)
}

// alarmLateness waits 50 times on a, each for 200µs to 1.2ms from its own
// start, and returns how late each wait ended. A wait that ends early, or
// more than a second late, fails the test.
func alarmLateness(t *testing.T, a *Alarm) []time.Duration {
	t.Helper()
	ch := make(chan struct{}, 1)
	lates := make([]time.Duration, 0, 50)
	for i := range 50 {
		at := time.Since(a.base) + 200*time.Microsecond + time.Duration(i%5)*250*time.Microsecond
		if !a.Wait(at, ch, nil) {
			t.Fatal("Wait without a stop channel returned false")
		}
		late := time.Since(a.base) - at
		if late < 0 || late > time.Second {
			t.Fatalf("wait %d ended %v after its time", i, late)
		}
		lates = append(lates, late)
	}
	return lates
}

// Many wake-ups pending at once are each delivered, none before its time,
// whatever the order they were asked for in.
func TestAlarmManyPending(t *testing.T) {
	a := NewAlarm(time.Now(), 0)
	defer a.Close()
	const n = 40
	chans := make([]chan struct{}, n)
	ats := make([]time.Duration, n)
	now := time.Since(a.base)
	for i := range chans {
		chans[i] = make(chan struct{}, 1)
		// Interleaved: later and earlier times alternate.
		ats[i] = now + 5*time.Millisecond + time.Duration((i*17)%n)*200*time.Microsecond
		a.At(ats[i], chans[i])
	}
	deadline := time.After(5 * time.Second)
	for i, ch := range chans {
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("wake-up %d (at %v) never delivered", i, ats[i])
		}
		if got := time.Since(a.base); got < ats[i] {
			t.Fatalf("wake-up %d delivered at %v, before its time %v", i, got, ats[i])
		}
	}
}

// A token left in the caller's channel by an earlier wake-up must not end a
// later Wait early.
func TestAlarmStaleTokenIgnored(t *testing.T) {
	a := NewAlarm(time.Now(), 0)
	defer a.Close()
	ch := make(chan struct{}, 1)
	ch <- struct{}{} // stale: from a wake-up nobody waited for
	at := time.Since(a.base) + 20*time.Millisecond
	if !a.Wait(at, ch, nil) {
		t.Fatal("Wait returned false")
	}
	if got := time.Since(a.base); got < at {
		t.Fatalf("Wait returned at %v, before %v: the stale token ended it", got, at)
	}
}

// Wait gives up, with false, when stop closes.
func TestAlarmWaitStop(t *testing.T) {
	a := NewAlarm(time.Now(), 0)
	defer a.Close()
	stop := make(chan struct{})
	time.AfterFunc(10*time.Millisecond, func() { close(stop) })
	start := time.Now()
	if a.Wait(time.Hour, make(chan struct{}, 1), stop) {
		t.Fatal("Wait for an hour returned true")
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("Wait took %v to notice stop", el)
	}
}

// A time already past is delivered at once, from At itself.
func TestAlarmPastIsImmediate(t *testing.T) {
	a := NewAlarm(time.Now().Add(-time.Second), 0)
	defer a.Close()
	ch := make(chan struct{}, 1)
	a.At(500*time.Millisecond, ch)
	select {
	case <-ch:
	default:
		t.Fatal("a past time was not delivered by At")
	}
}

// Close delivers every pending wake-up before it returns, and an alarm
// closed already delivers new ones at once.
func TestAlarmCloseDeliversPending(t *testing.T) {
	a := NewAlarm(time.Now(), 0)
	chans := make([]chan struct{}, 3)
	for i := range chans {
		chans[i] = make(chan struct{}, 1)
		a.At(time.Duration(i+1)*time.Hour, chans[i])
	}
	a.Close()
	for i, ch := range chans {
		select {
		case <-ch:
		default:
			t.Fatalf("pending wake-up %d not delivered by Close", i)
		}
	}
	a.Close() // idempotent
	late := make(chan struct{}, 1)
	a.At(time.Hour, late)
	select {
	case <-late:
	default:
		t.Fatal("At on a closed alarm did not deliver at once")
	}
}

// With a quantum, an Alarm fires at most once per quantum: wake-ups due in
// between are delivered together, none before its time and none much later
// than a quantum after it.
func TestAlarmQuantum(t *testing.T) {
	const quantum = 3 * time.Millisecond
	a := NewAlarm(time.Now(), quantum)
	defer a.Close()
	const n = 60
	start := time.Since(a.base) + time.Millisecond
	got := make(chan time.Duration, n)
	for i := range n {
		at := start + time.Duration(i)*200*time.Microsecond // 12 ms of wake-ups, one every 200 µs
		go func() {
			ch := make(chan struct{}, 1)
			if a.Wait(at, ch, nil) {
				got <- time.Since(a.base) - at
			}
		}()
	}
	var lates []time.Duration
	for range n {
		select {
		case l := <-got:
			lates = append(lates, l)
		case <-time.After(5 * time.Second):
			t.Fatalf("only %d of %d wake-ups delivered", len(lates), n)
		}
	}
	slices.Sort(lates)
	if lates[0] < 0 {
		t.Errorf("a wake-up came %v early", -lates[0])
	}
	// Batched: most wait part of a quantum; none waits much more than one.
	if med := lates[n/2]; med < 300*time.Microsecond {
		t.Errorf("median lateness %v: wake-ups 200 µs apart were not batched by a %v quantum", med, quantum)
	}
	if worst := lates[n-1]; worst > quantum+50*time.Millisecond {
		t.Errorf("worst lateness %v, want about the %v quantum at most", worst, quantum)
	}
}

// Asking for a wake-up allocates nothing once the heap has grown.
func TestAlarmNoAllocs(t *testing.T) {
	a := NewAlarm(time.Now(), 0)
	defer a.Close()
	ch := make(chan struct{}, 1)
	far := time.Hour
	for range 64 {
		a.At(far, ch) // grow the heap
	}
	if n := testing.AllocsPerRun(1000, func() { a.At(far, ch) }); n != 0 {
		t.Errorf("At allocates %v times per call", n)
	}
}
