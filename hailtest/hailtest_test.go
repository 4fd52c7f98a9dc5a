package hailtest_test

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/hail-loadgen/hail"
	"github.com/hail-loadgen/hail/hailtest"
	"github.com/hail-loadgen/hail/internal/serve"
)

// recorder is a testing.TB that keeps what the assertions report.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, a ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, a...))
}

// AssertExact passes on a run's own server and fails, saying by how much,
// when the server answered a request the run did not make.
func TestAssertExact(t *testing.T) {
	t.Parallel()
	srv := hailtest.NewServer(t)
	res, err := hail.Run(context.Background(), hail.Plan{URL: srv.URL + "/?status=404:20", Requests: 300, Connections: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !hailtest.AssertExact(t, srv, res) {
		return
	}
	resp, err := http.Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	r := &recorder{TB: t}
	if hailtest.AssertExact(r, srv, res) || len(r.errs) != 1 || !strings.Contains(r.errs[0], "the server sent 301 responses, the run counted 300") ||
		!strings.Contains(r.errs[0], "status 200: the server sent") {
		t.Errorf("AssertExact after a request of its own: %q", r.errs)
	}
	srv.ResetStats()
	if st := srv.Stats(); st.Requests != 0 || len(st.ByStatus) != 0 {
		t.Errorf("after ResetStats: %+v", st)
	}
}

func TestAssertVerdictAndNoErrors(t *testing.T) {
	t.Parallel()
	srv := hailtest.NewServer(t)
	res, err := hail.Run(context.Background(), hail.Plan{URL: srv.URL + "/", Requests: 200, Connections: 2})
	if err != nil {
		t.Fatal(err)
	}
	hailtest.AssertNoErrors(t, res)
	hailtest.AssertVerdict(t, res, hail.BottleneckNone, hail.BottleneckTarget, hail.BottleneckGenerator, hail.BottleneckOthers, hail.BottleneckWakeup)
	r := &recorder{TB: t}
	if hailtest.AssertVerdict(r, res, "no-such-kind") || len(r.errs) != 1 || !strings.Contains(r.errs[0], `the verdict is "`) {
		t.Errorf("AssertVerdict with a kind the run cannot have: %q", r.errs)
	}
	res, _ = hail.Run(context.Background(), hail.Plan{URL: "http://127.0.0.1:1/", Requests: 10, Connections: 1})
	r = &recorder{TB: t}
	if hailtest.AssertNoErrors(r, res) || len(r.errs) != 1 || !strings.Contains(r.errs[0], "10 of 10 requests failed: connection refused ×10") {
		t.Errorf("AssertNoErrors on refused connections: %q", r.errs)
	}
}

// Stats has every count the server keeps, under the same names.
func TestStatsCoversTheServers(t *testing.T) {
	t.Parallel()
	for _, pair := range [][2]reflect.Type{{reflect.TypeFor[serve.Stats](), reflect.TypeFor[hailtest.Stats]()},
		{reflect.TypeFor[serve.ItemStats](), reflect.TypeFor[hailtest.ItemStats]()},
		{reflect.TypeFor[serve.HoldStats](), reflect.TypeFor[hailtest.HoldStats]()}} {
		for i := range pair[0].NumField() {
			name := pair[0].Field(i).Name
			if _, ok := pair[1].FieldByName(name); !ok {
				t.Errorf("hailtest.%s has no %s (the server's %s has)", pair[1].Name(), name, pair[0].Name())
			}
		}
	}
}
