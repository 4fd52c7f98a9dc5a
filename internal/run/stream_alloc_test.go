package run

import (
	"bufio"
	"fmt"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/internal/stream"
)

// tokenServer serves, to every request on every connection, an endless
// chunked stream of chat completion chunks, one every gap, each written
// from pre-encoded bytes: it allocates nothing per event itself, so the
// process's allocations are hail's.
func tokenServer(t *testing.T, gap time.Duration) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	ev := `data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" token"},"finish_reason":null}]}` + "\n\n"
	chunk := []byte(fmt.Sprintf("%x\r\n%s\r\n", len(ev), ev))
	head := []byte("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
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
			}()
		}
	}()
	return "http://" + ln.Addr().String() + "/v1/chat/completions"
}

// Streams' events cost no allocation: between two progress ticks, a second
// apart, thousands of events arrive on each engine and the process
// allocates (almost) nothing.
func TestNoAllocationsPerEvent(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		p := newPlan(t, tokenServer(t, 500*time.Microsecond), engine)
		p.Duration, p.Connections, p.SSE, p.StreamDrain = 2500*time.Millisecond, 8, true, -1
		var marks []runtime.MemStats
		var events []int64
		w := &Workload{Stream: &stream.Config{Tokens: true}}
		res := mustRun(t, p, Options{Workload: w, Progress: func(s stats.Snapshot) {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			marks = append(marks, m)
			events = append(events, s.Last.Events)
		}})
		if len(marks) < 2 {
			t.Fatalf("only %d progress ticks", len(marks))
		}
		n := events[1]
		allocs := marks[1].Mallocs - marks[0].Mallocs
		t.Logf("%d events, %d allocations between ticks; %d streams truncated", n, allocs, res.Hail.Counts.Truncated)
		if n < 2000 || float64(allocs)/float64(n) > 0.01 {
			t.Errorf("%d allocations for %d events", allocs, n)
		}
		if res.Hail.Counts.Truncated != 8 || res.Hail.Stream.ReadLag.Samples == 0 {
			t.Errorf("truncated %d, read lag samples %d: want the 8 endless streams cut, their lag measured", res.Hail.Counts.Truncated, res.Hail.Stream.ReadLag.Samples)
		}
	})
}
