package runner

import (
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/scenario"
)

// stopping is a target that stops accepting connections once stopAt
// requests have arrived over conns connections: that request closes its
// listener, and from then every response closes its connection, so every
// later request fails to connect. Waiting for the client's every
// connection first means none waits unaccepted in the backlog when the
// listener closes (the kernel would reset it with a request in it, sent
// but never seen). It counts every arrival.
type stopping struct {
	arrivals, conns atomic.Int64
	stop            func()
}

func startStopping(t *testing.T, stopAt, conns int64) (string, *stopping) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &stopping{stop: sync.OnceFunc(func() { ln.Close() })}
	srv := &http.Server{ErrorLog: log.New(io.Discard, "", 0), Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := s.arrivals.Add(1)
		time.Sleep(time.Millisecond) // every connection of the client gets to carry requests
		if n >= stopAt && s.conns.Load() >= conns {
			s.stop()
			w.Header().Set("Connection", "close")
		}
		w.WriteHeader(http.StatusNoContent)
	}), ConnState: func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String(), s
}

// A DELETE that was never sent (its connection could not be made) gives
// back the id it took: the pool ends with every id no request that reached
// the target deleted. Requests that failed to connect are errors counted
// as not sent, never as sent; the target's count equals sent.
func TestTakenValuesReturnWhenNotSent(t *testing.T) {
	t.Parallel()
	for _, eng := range engines(t) {
		t.Run(eng, func(t *testing.T) {
			t.Parallel()
			base, srv := startStopping(t, 30, 4)
			ids := make([]string, 100)
			for i := range ids {
				ids[i] = fmt.Sprintf("vm-%d", i)
			}
			src := "base: " + base + "\nconnections: 4\nrequests: 100\nconnect_timeout: 300ms\npools:\n  vms: {values: [" + strings.Join(ids, ", ") + "]}\n" +
				"steps:\n  - name: destroy\n    method: DELETE\n    path: /items/{{take vms}}\n"
			res, _ := runFile(t, src, base, func(s *scenario.Scenario) { s.Settings.Engine = eng }, nil)
			c := res.Hail.Counts
			if c.Sent != srv.arrivals.Load() || c.NotSent == 0 || c.Sent+c.NotSent != 100 {
				t.Fatalf("sent %d (the target counted %d), not sent %d: want sent = the target's count, the rest not sent (errors %v)",
					c.Sent, srv.arrivals.Load(), c.NotSent, res.ErrorDistribution)
			}
			var live int
			for _, p := range res.Hail.Scenario.Pools {
				if p.Name == "vms" {
					live = p.Live
				}
			}
			if want := 100 - int(c.Sent); live != want {
				t.Errorf("pool vms ends with %d ids, want %d: the %d DELETEs never sent must give theirs back", live, want, c.NotSent)
			}
		})
	}
}
