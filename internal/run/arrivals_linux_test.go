//go:build linux

package run

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net"
	"slices"
	"sync"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/internal/testnet"
	"github.com/hail-loadgen/hail/internal/testtier"
)

// arrivalServer answers every request with a tiny 200 and logs the kernel's
// receive time (SO_TIMESTAMPNS) of every request head: the ground truth of
// when hail's requests arrived.
type arrivalServer struct {
	addr     string
	mu       sync.Mutex
	arrivals []int64 // Unix ns
}

func startArrivalServer(t *testing.T) *arrivalServer {
	t.Helper()
	s := &arrivalServer{}
	s.addr = testnet.Serve(t, "127.0.0.1:0", func(c net.Conn) { s.serve(c.(*net.TCPConn)) })
	return s
}

func (s *arrivalServer) serve(c *net.TCPConn) {
	rc, err := c.SyscallConn()
	if err != nil {
		return
	}
	rc.Control(func(fd uintptr) { _ = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1) })
	buf := make([]byte, 4096)
	oob := make([]byte, 128)
	var pending []byte
	for {
		var n, oobn int
		var rerr error
		err := rc.Read(func(fd uintptr) bool {
			n, oobn, _, _, rerr = unix.Recvmsg(int(fd), buf, oob, 0)
			return rerr != unix.EAGAIN
		})
		if err != nil || rerr != nil || n == 0 {
			return
		}
		at := rxTime(oob[:oobn])
		pending = append(pending, buf[:n]...)
		for {
			i := bytes.Index(pending, []byte("\r\n\r\n"))
			if i < 0 {
				break
			}
			pending = pending[i+4:]
			s.mu.Lock()
			s.arrivals = append(s.arrivals, at)
			s.mu.Unlock()
			if _, err := c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")); err != nil {
				return
			}
		}
	}
}

// rxTime reads the SCM_TIMESTAMPNS control message (CLOCK_REALTIME).
func rxTime(oob []byte) int64 {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return time.Now().UnixNano()
	}
	for _, m := range msgs {
		if m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SO_TIMESTAMPNS && len(m.Data) >= int(unsafe.Sizeof(unix.Timespec{})) {
			var ts unix.Timespec
			_ = binary.Read(bytes.NewReader(m.Data), binary.NativeEndian, &ts)
			return ts.Nano()
		}
	}
	return time.Now().UnixNano()
}

// In a quiet run, hail's own lateness p99 agrees with what the server saw:
// the kernel's receive time of each request minus its intended time, within
// 0.5 ms (the rest of the difference is the loopback's own delay). A
// timing bound: it runs in the timing tier.
func TestOwnLatenessMatchesArrivals(t *testing.T) {
	testtier.Require(t, testtier.Timing)
	if raceDetector {
		t.Skip("a timing comparison: .ci/run runs it without -race")
	}
	forEngines(t, func(t *testing.T, engine string) {
		timing(t, func() error {
			s := startArrivalServer(t)
			p := newPlan(t, "http://"+s.addr+"/", engine)
			p.Requests, p.Rate, p.Connections = 3000, 2000, 8
			tr := stats.NewTracer(0)
			type sent struct{ start, intended int64 }
			var recs []sent
			done := make(chan struct{})
			go func() {
				defer close(done)
				for b := range tr.Batches() {
					for _, r := range b {
						recs = append(recs, sent{r.Start, r.Intended})
					}
					tr.Recycle(b)
				}
			}()
			res := mustRun(t, p, Options{Tracer: tr})
			tr.Close()
			<-done
			slices.SortFunc(recs, func(a, b sent) int { return int(a.start - b.start) })
			s.mu.Lock()
			arr := slices.Clone(s.arrivals)
			s.mu.Unlock()
			slices.Sort(arr)
			if len(arr) != 3000 || len(recs) != 3000 {
				t.Fatalf("%d arrivals, %d trace records, want 3000 each", len(arr), len(recs))
			}
			// Pair the i-th request sent with the i-th to arrive (they are 500 µs apart).
			var serverLate, hailLate []int64
			for i, r := range recs {
				serverLate = append(serverLate, arr[i]-(res.Hail.Start.UnixNano()+r.intended))
				hailLate = append(hailLate, r.start-r.intended)
			}
			p99 := func(v []int64) time.Duration { slices.Sort(v); return time.Duration(v[len(v)*99/100]) }
			server, stamped := p99(serverLate), p99(hailLate)
			own, wait := res.Hail.SendDelay.Own.P99, res.Hail.SendDelay.ConnWait.P99
			t.Logf("%s: server-side lateness p99 %v; hail's send delay p99 %v = own %v + connection wait %v", engine, server, stamped, own, wait)
			if d := server - stamped; d < -500*time.Microsecond || d > 500*time.Microsecond {
				return fmt.Errorf("server-side lateness p99 %v and hail's send delay p99 %v differ by more than 0.5 ms", server, stamped)
			}
			if wait > 100*time.Microsecond {
				// Not a quiet run (other tests on these CPUs): requests waited
				// for connections, so own lateness is not all of their lateness.
				t.Logf("connection wait p99 %v: own lateness not compared", wait)
				return nil
			}
			if d := server - own; d < -500*time.Microsecond || d > 500*time.Microsecond {
				return fmt.Errorf("server-side lateness p99 %v and hail's own lateness p99 %v differ by more than 0.5 ms", server, own)
			}
			return nil
		})
	})
}
