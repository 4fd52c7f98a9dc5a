package hail_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hail-loadgen/hail"
	"github.com/hail-loadgen/hail/hailtest"
)

// A run whose connections hang in their setup (a listener that never
// accepts, its backlog full) holds its dial slots; another run in the
// same process dials at once: it ends while the first run's dials still
// hang (their connect timeout is 30 s; dial slots shared between runs
// would hold the second run until then). The first run is cancelled once
// the second has ended.
func TestDialSlotsAreTheRunsOwn(t *testing.T) {
	t.Parallel()
	hole := blackhole(t)
	srv := hailtest.NewServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := make(chan struct{})
	go func() {
		defer close(first)
		_, _ = hail.Run(ctx, hail.Plan{URL: "http://" + hole + "/", Requests: 256, Connections: 256,
			ConnectTimeout: 30 * time.Second, Engine: hail.EngineNet})
	}()
	deadline := time.Now().Add(20 * time.Second)
	for synSent(t, hole) < 250 { // until the first run holds its dial slots
		if time.Now().After(deadline) {
			t.Fatalf("the first run has %d of its 256 dials hanging after 20 s", synSent(t, hole))
		}
		time.Sleep(5 * time.Millisecond)
	}
	second, stop := context.WithTimeout(context.Background(), 25*time.Second)
	defer stop()
	start := time.Now()
	res, err := hail.Run(second, hail.Plan{URL: srv.URL + "/", Requests: 100, Connections: 2, Engine: hail.EngineNet})
	took := time.Since(start)
	select {
	case <-first:
		t.Errorf("the first run ended (its dials have a 30 s timeout) before the second, which took %v", took)
	default:
	}
	cancel()
	select {
	case <-first:
	case <-time.After(10 * time.Second):
		t.Errorf("the first run did not end within 10 s of its cancellation")
	}
	if err != nil {
		t.Fatal(err)
	}
	hailtest.AssertExact(t, srv, res)
	if res.Hail.Interrupted {
		t.Errorf("the second run was interrupted after %v (its dials waited for the first run's)", took)
	}
}

// blackhole is a loopback address whose listener never accepts and whose
// accept queue is full: connections to it hang in their setup.
func blackhole(t *testing.T) string {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*syscall.SockaddrInet4).Port))
	for range 4 { // fill the accept queue
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err != nil {
			break
		}
		t.Cleanup(func() { c.Close() })
	}
	return addr
}

// synSent counts the connections to addr (127.0.0.1:PORT) waiting for the
// other end's SYN-ACK, from /proc/net/tcp.
func synSent(t *testing.T, addr string) int {
	_, port, _ := net.SplitHostPort(addr)
	p, _ := strconv.Atoi(port)
	want := fmt.Sprintf("0100007F:%04X", p)
	f, err := os.Open("/proc/net/tcp")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) > 3 && fields[2] == want && fields[3] == "02" {
			n++
		}
	}
	return n
}
