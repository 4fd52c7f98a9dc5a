package hail_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hail-loadgen/hail"
	"github.com/hail-loadgen/hail/hailtest"
)

// A Go test that loads a service and asserts on the result: here the
// built-in target, started in-process.
func TestLoadInProcess(t *testing.T) {
	srv := hailtest.NewServer(t)
	res, err := hail.Run(context.Background(), hail.Plan{
		URL:         srv.URL + "/?delay=1ms",
		Requests:    2000,
		Connections: 16,
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.StatusCodeDistribution["200"]; got != 2000 {
		t.Errorf("%d responses of 200, want 2000 (errors %v)", got, res.ErrorDistribution)
	}
	if got := srv.Stats().Requests; got != 2000 {
		t.Errorf("the server counted %d requests", got)
	}
	if p99 := res.LatencyPercentiles.P99; p99 > 100*time.Millisecond {
		t.Errorf("p99 %v", p99)
	}
}

func ExampleRun() {
	srv, err := hailtest.Start()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	res, err := hail.Run(context.Background(), hail.Plan{URL: srv.URL + "/", Requests: 1000, Connections: 8})
	if err != nil {
		fmt.Println(err)
		return
	}
	c := res.Hail.Counts
	fmt.Println("sent:", c.Sent, "responses:", c.Responses, "errors:", c.Errors)
	// Output: sent: 1000 responses: 1000 errors: 0
}

// The open model: requests at fixed intended times; latency counts from
// them, and the verdict names the bottleneck.
func ExampleRun_openModel() {
	srv, err := hailtest.Start()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	res, err := hail.Run(context.Background(), hail.Plan{URL: srv.URL + "/", Rate: 500, Duration: time.Second, Connections: 8})
	if err != nil {
		fmt.Println(err)
		return
	}
	c := res.Hail.Counts
	fmt.Println("intended:", c.Intended, "sent + unsent:", c.Sent+c.Unsent, "model:", res.Hail.Model)
	// Output: intended: 500 sent + unsent: 500 model: open
}

// Cancelling the context ends the run early, with a complete result.
func ExampleRun_cancel() {
	srv, err := hailtest.Start()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	res, err := hail.Run(ctx, hail.Plan{URL: srv.URL + "/?delay=1ms", Duration: time.Minute, Connections: 4})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("interrupted:", res.Hail.Interrupted, "took under a second:", res.Summary.Total < time.Second)
	// Output: interrupted: true took under a second: true
}

// A plan that cannot run names the field at fault.
func ExamplePlan_Validate() {
	err := hail.Plan{URL: "http://127.0.0.1:8080/", Streams: 4}.Validate()
	var fe *hail.FieldError
	if errors.As(err, &fe) {
		fmt.Println(fe.Field)
		fmt.Println(err)
	}
	// Output:
	// Streams
	// Streams 4: several streams per connection need HTTP/2 or HTTP/3: give HTTPVersion "2" or "3"
}

// A progress callback sees the run once a second.
func ExampleWithProgress() {
	srv, err := hailtest.Start()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	ticks := 0
	_, err = hail.Run(context.Background(), hail.Plan{URL: srv.URL + "/", Duration: 2500 * time.Millisecond, Rate: 200},
		hail.WithProgress(func(p hail.Progress) { ticks++ }))
	fmt.Println(err, ticks >= 2)
	// Output: <nil> true
}

// The README shows TestLoadInProcess as it is.
func TestReadmeShowsTheExample(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	a := strings.Index(s, "func TestLoadInProcess")
	b := a + strings.Index(s[a:], "\n}\n") + 3
	if a < 0 || !strings.Contains(string(readme), s[a:b]) {
		t.Error("README.md's \"Use from Go\" no longer shows TestLoadInProcess as example_test.go has it")
	}
}

// Results are written and read back as the JSON report (hail -j writes the
// same), and render as the text report.
func ExampleWriteJSON() {
	srv, err := hailtest.Start()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	res, err := hail.Run(context.Background(), hail.Plan{URL: srv.URL + "/?status=503:50", Requests: 400, Connections: 4},
		hail.WithSuccessBreakdown())
	if err != nil {
		fmt.Println(err)
		return
	}
	var buf bytes.Buffer
	if err := hail.WriteJSON(&buf, res); err != nil {
		fmt.Println(err)
		return
	}
	back, err := hail.ReadJSON(&buf)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("requests:", back.Hail.Counts.Requests, "2xx breakdown:", back.LatencyPercentilesSuccessful != nil)
	var text bytes.Buffer
	_ = hail.WriteText(&text, back)
	fmt.Println("text mentions the summary:", strings.Contains(text.String(), "Summary:"))
	// Output:
	// requests: 400 2xx breakdown: true
	// text mentions the summary: true
}
