package run

import (
	"bufio"
	"fmt"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/internal/stream"
	"github.com/hail-loadgen/hail/internal/testnet"
	"github.com/hail-loadgen/hail/result"
)

// tokenServer serves, to every request on every connection, an endless
// chunked stream of chat completion chunks, one every gap, each written
// from pre-encoded bytes: it allocates nothing per event itself, so the
// process's allocations are hail's. It counts the streams it began and the
// events it wrote.
func tokenServer(t *testing.T, gap time.Duration) (url string, streams, events *atomic.Int64) {
	t.Helper()
	streams, events = new(atomic.Int64), new(atomic.Int64)
	ev := `data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" token"},"finish_reason":null}]}` + "\n\n"
	chunk := []byte(fmt.Sprintf("%x\r\n%s\r\n", len(ev), ev))
	head := []byte("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
	return "http://" + testnet.Serve(t, "127.0.0.1:0", func(c net.Conn) {
		br := bufio.NewReader(c)
		for { // the request's head
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			if strings.TrimSpace(line) == "" {
				break
			}
		}
		if _, err := c.Write(head); err != nil {
			return
		}
		streams.Add(1)
		for {
			time.Sleep(gap)
			if _, err := c.Write(chunk); err != nil {
				return
			}
			events.Add(1)
		}
	}) + "/v1/chat/completions", streams, events
}

// Streams' events cost no allocation: thousands of events arrive on every
// engine at once (8 streams each) and the process allocates (almost)
// nothing from the moment every stream has sent 50 events to the first
// engine's first progress tick: under a tenth of an allocation an event,
// the collectors' ticks included. The count is the whole process's, so the
// test does not run in parallel with others.
func TestNoAllocationsPerEvent(t *testing.T) {
	url, streams, events := tokenServer(t, 500*time.Microsecond)
	var (
		m0, m1       runtime.MemStats
		seen0, seen1 int64
		marked       = make(chan struct{})
	)
	res := make([]*result.Result, len(testEngines))
	var wg sync.WaitGroup
	for i, engine := range testEngines {
		p := newPlan(t, url, engine)
		p.Duration, p.Connections, p.SSE, p.StreamDrain = 1150*time.Millisecond, 8, true, -1
		o := Options{Workload: &Workload{Stream: &stream.Config{Tokens: true}}}
		if i == 0 {
			o.Progress = func(stats.Snapshot) {
				select {
				case <-marked:
				default:
					return // too slow to reach the mark in a second: t.Fatalf below
				}
				if seen1 == 0 {
					runtime.ReadMemStats(&m1)
					seen1 = events.Load()
				}
			}
		}
		wg.Go(func() { res[i] = mustRun(t, p, o) })
	}
	all := int64(8 * len(testEngines))
	for streams.Load() < all || events.Load() < 50*all {
		time.Sleep(time.Millisecond)
	}
	seen0 = events.Load()
	runtime.ReadMemStats(&m0)
	close(marked)
	wg.Wait()
	if seen1 == 0 {
		t.Fatalf("%d streams, %d events by the first tick", streams.Load(), events.Load())
	}
	for i, r := range res {
		if r.Hail.Counts.Truncated != 8 || r.Hail.Stream.ReadLag.Samples == 0 {
			t.Errorf("%s: truncated %d, read lag samples %d: want the 8 endless streams cut, their lag measured",
				testEngines[i], r.Hail.Counts.Truncated, r.Hail.Stream.ReadLag.Samples)
		}
	}
	n, allocs := seen1-seen0, m1.Mallocs-m0.Mallocs
	t.Logf("%d events, %d allocations between the mark and the tick", n, allocs)
	// One allocation per event would be n of them. What a window costs
	// whatever its events (~140-230 here, under -race too): the first
	// engine's tick (each second's new histograms) and each stream's
	// doubling of its kept gaps (stream.Meter's appendDoubling).
	if n < 2000 || float64(allocs) > float64(n)/10 {
		t.Errorf("%d allocations for %d events", allocs, n)
	}
}
