package hailtest_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/hail-loadgen/hail"
	"github.com/hail-loadgen/hail/hailtest"
)

// In a test, t is the test's *testing.T; AssertExact reports each
// difference between the run's counts and the server's with t.Errorf.
func ExampleAssertExact() {
	t := &exampleT{}
	defer t.cleanup()
	srv := hailtest.NewServer(t)
	res, err := hail.Run(context.Background(), hail.Plan{URL: srv.URL + "/?status=503:10&delay=1ms", Requests: 500, Connections: 8})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("exact:", hailtest.AssertExact(t, srv, res), "503s:", srv.Stats().ByStatus[503] == uint64(res.StatusCodeDistribution["503"]))
	// Output: exact: true 503s: true
}

// AssertVerdict checks who limited the test: here the target, which
// nothing is listening for.
func ExampleAssertVerdict() {
	t := &exampleT{}
	res, err := hail.Run(context.Background(), hail.Plan{URL: "http://127.0.0.1:1/", Requests: 10, Connections: 1})
	fmt.Println(err)
	fmt.Println(hailtest.AssertVerdict(t, res, hail.BottleneckTarget))
	// Output:
	// target unreachable: unreachable: none of the 10 requests could be sent: connection refused ×10; nothing is listening on 127.0.0.1:1: start the target, or check the URL's host and port
	// true
}

// exampleT stands for a test's *testing.T in the examples: it prints what
// a test would report.
type exampleT struct {
	testing.TB
	cleanups []func()
}

func (t *exampleT) Helper()                        {}
func (t *exampleT) Errorf(format string, a ...any) { fmt.Printf(format+"\n", a...) }
func (t *exampleT) Fatal(a ...any)                 { panic(fmt.Sprint(a...)) }
func (t *exampleT) Cleanup(f func())               { t.cleanups = append(t.cleanups, f) }
func (t *exampleT) cleanup() {
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
}
