package run

import (
	"bufio"
	"fmt"
	"net"
	"runtime"
	"strings"
	"sync"
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
// process's allocations are hail's.
func tokenServer(t *testing.T, gap time.Duration) string {
	t.Helper()
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
		for {
			time.Sleep(gap)
			if _, err := c.Write(chunk); err != nil {
				return
			}
		}
	}) + "/v1/chat/completions"
}

// Streams' events cost no allocation: between two progress ticks, a second
// apart, thousands of events arrive on every engine at once and the
// process allocates (almost) nothing: under a tenth of an allocation an
// event, the collector's own second included. The count is the whole process's, so
// the test does not run in parallel with others; the engines run side by
// side, the first one's ticks marking the second measured.
func TestNoAllocationsPerEvent(t *testing.T) {
	url := tokenServer(t, 500*time.Microsecond)
	var marks []runtime.MemStats
	res := make([]*result.Result, len(testEngines))
	var wg sync.WaitGroup
	for i, engine := range testEngines {
		p := newPlan(t, url, engine)
		p.Duration, p.Connections, p.SSE, p.StreamDrain = 2500*time.Millisecond, 8, true, -1
		o := Options{Workload: &Workload{Stream: &stream.Config{Tokens: true}}}
		if i == 0 {
			o.Progress = func(stats.Snapshot) {
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				marks = append(marks, m)
			}
		}
		wg.Go(func() { res[i] = mustRun(t, p, o) })
	}
	wg.Wait()
	if len(marks) < 2 {
		t.Fatalf("only %d progress ticks", len(marks))
	}
	allocs := marks[1].Mallocs - marks[0].Mallocs
	var n int64
	for i, r := range res {
		if len(r.Hail.Series) < 2 {
			t.Fatalf("%s: %d seconds in the series", testEngines[i], len(r.Hail.Series))
		}
		n += r.Hail.Series[1].Events
		if r.Hail.Counts.Truncated != 8 || r.Hail.Stream.ReadLag.Samples == 0 {
			t.Errorf("%s: truncated %d, read lag samples %d: want the 8 endless streams cut, their lag measured",
				testEngines[i], r.Hail.Counts.Truncated, r.Hail.Stream.ReadLag.Samples)
		}
	}
	t.Logf("%d events, %d allocations in the second second", n, allocs)
	// One allocation per event would be n of them; the collector's second
	// costs a few dozen whatever the events (~26 here, ~110 under -race).
	if n < 2000*int64(len(testEngines)) || float64(allocs) > float64(n)/10 {
		t.Errorf("%d allocations for %d events", allocs, n)
	}
}
