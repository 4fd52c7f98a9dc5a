package runner

import (
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/report"
	"github.com/hail-loadgen/hail/internal/scenario"
	"github.com/hail-loadgen/hail/internal/serve/servetest"
)

// Each check kind passes on responses that meet it and fails, as its own
// error kind, on those that do not; an expected 404 is not a failure and an
// unexpected one is — on every engine.
func TestChecks(t *testing.T) {
	t.Parallel()
	const src = `
base: http://unused:1
connections: 4
requests: 400
steps:
  - name: ok
    path: /echo
    method: POST
    body: '{"id":"x1","n":3,"on":true}'
    headers: {Content-Type: application/json}
    expect:
      status: [200, 201]
      body_contains: '"id"'
      json: {id: x1, n: 3, on: true, missing: null}
      header: {Content-Type: application/json}
  - name: gone
    path: /items/0000000000000000
    expect: {status: 404}
  - name: badstatus
    path: /?status=503
    expect: {status: 2xx}
  - name: badbody
    path: /
    expect: {body_contains: nope}
  - name: badjson
    path: /echo
    method: POST
    body: '{"id":"x2"}'
    expect: {json: {id: x1}}
  - name: badheader
    path: /
    expect: {header: {Content-Type: application/json}}
  - name: plain404
    path: /items/0000000000000000
`
	for _, eng := range engines(t) {
		t.Run(eng, func(t *testing.T) {
			t.Parallel()
			res, _, _ := runOn(t, eng, src)
			for _, c := range []struct {
				step, kind, check string
			}{
				{"badstatus", "check failed: status", "status 2xx"},
				{"badbody", "check failed: body_contains", `body contains "nope"`},
				{"badjson", "check failed: json", `json id = "x1"`},
				{"badheader", "check failed: header", `header Content-Type = "application/json"`},
			} {
				s := step(t, res, c.step)
				if s.Counts.Requests == 0 || s.ErrorDistribution[c.kind] != s.Counts.Requests || s.Counts.Failed != s.Counts.Requests {
					t.Errorf("%s: %d requests, errors %v, failed %d: want every one a %q", c.step, s.Counts.Requests, s.ErrorDistribution, s.Counts.Failed, c.kind)
				}
				if s.CheckFailures[c.check] != s.Counts.Requests {
					t.Errorf("%s: check failures %v, want %q ×%d", c.step, s.CheckFailures, c.check, s.Counts.Requests)
				}
			}
			ok := step(t, res, "ok")
			if ok.Counts.Failed != 0 || ok.StatusCodeDistribution["200"] != ok.Counts.Requests || len(ok.CheckFailures) != 0 {
				t.Errorf("ok: %+v, statuses %v, errors %v, checks %v", ok.Counts, ok.StatusCodeDistribution, ok.ErrorDistribution, ok.CheckFailures)
			}
			gone := step(t, res, "gone")
			if gone.Counts.Failed != 0 || gone.ErrorRate != 0 || gone.Counts.Expected != gone.Counts.Requests || gone.StatusCodeDistribution["404"] != gone.Counts.Requests {
				t.Errorf("gone (404 expected): %+v, error rate %g", gone.Counts, gone.ErrorRate)
			}
			plain := step(t, res, "plain404")
			if plain.Counts.Failed != plain.Counts.Requests {
				t.Errorf("plain404 (404 not expected): %+v", plain.Counts)
			}
			m := report.MeasureRun(res)
			var want int64
			for _, s := range res.Hail.Steps {
				want += s.Counts.Failed
			}
			if m.Failed != want || res.Hail.Counts.Requests != 400 {
				t.Errorf("run failed %d, steps' sum %d; %d requests", m.Failed, want, res.Hail.Counts.Requests)
			}
		})
	}
}

// Think time paces each virtual user: c connections with a 50 ms pause
// after every request send about c / 50 ms requests per second, on every
// engine; from a flow and from the file too.
func TestThinkTimeBoundsRate(t *testing.T) {
	t.Parallel()
	for _, where := range []string{"step", "flow", "file"} {
		src := `
base: http://unused:1
connections: 4
duration: 500ms
steps:
  - {name: a, path: /` + map[string]string{"step": ", think: 50ms", "flow": ", weight: 0", "file": ""}[where] + `}
`
		switch where {
		case "flow":
			src += "flows:\n  - {name: f, steps: [a, a], think: 40ms..60ms}\n"
		case "file":
			src += "think: 0.05\n"
		}
		for _, eng := range engines(t) {
			t.Run(where+"/"+eng, func(t *testing.T) {
				t.Parallel()
				base, _ := servetest.Start(t)
				start := time.Now()
				res, _ := runFile(t, src, base, func(s *scenario.Scenario) { s.Settings.Engine = eng }, nil)
				el := time.Since(start).Seconds()
				n := float64(res.Hail.Counts.Requests)
				// 4 users × (0.5 s / 50 ms) = 40 requests, plus the first
				// ones; a loaded machine makes fewer (the bound is from
				// above), never more.
				t.Logf("%.0f requests in %.2fs", n, el)
				if n < 8 || n > 4*(el/0.05)+4 {
					t.Errorf("%.0f requests in %.2fs; want about 40 (c / think)", n, el)
				}
			})
		}
	}
}
