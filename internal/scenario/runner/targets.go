package runner

import (
	"context"
	"fmt"

	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/run"
	"github.com/hail-loadgen/hail/internal/scenario"
	"github.com/hail-loadgen/hail/internal/transport"
)

// Targets are a scenario's origins made ready for its runs: each one's
// plan (the run's, sent to its URL over its protocol) and dialer, built
// once for the setup, the load and the teardown (its TLS files read and
// its name looked up once).
type Targets struct {
	sc      *scenario.Scenario
	run     *plan.Plan
	plans   []*plan.Plan
	dialers []*transport.Dialer
}

// NewTargets prepares sc's origins for runs of p (Scenario.Plan). Its
// errors are phrased for the user and name the target when there are
// several.
func NewTargets(ctx context.Context, sc *scenario.Scenario, p *plan.Plan) (*Targets, error) {
	t := &Targets{sc: sc, run: p}
	for k, o := range sc.Origins {
		q, err := sc.OriginPlan(p, k)
		if err == nil {
			var d *transport.Dialer
			if d, err = run.NewDialer(ctx, q); err == nil {
				t.plans, t.dialers = append(t.plans, q), append(t.dialers, d)
				continue
			}
		}
		if len(sc.Origins) > 1 {
			return nil, fmt.Errorf("target %s: %v", o.Name, err)
		}
		return nil, err
	}
	return t, nil
}

// Plan is origin k's plan.
func (t *Targets) Plan(k int) *plan.Plan { return t.plans[k] }

// Dialer is origin k's dialer.
func (t *Targets) Dialer(k int) *transport.Dialer { return t.dialers[k] }

// Route sends w, the scenario's load (Workload), to its origins: one
// run.Origin per origin when it sends to several (nil is then returned),
// else the dialer of its one origin, for run.Options.Dialer.
func (t *Targets) Route(w *run.Workload) *transport.Dialer {
	sc := t.sc
	ks := sc.LoadOrigins()
	if len(ks) == 1 {
		return t.dialers[ks[0]]
	}
	for _, k := range ks {
		o := sc.Origins[k]
		var steps []*scenario.Step
		for _, i := range o.Steps() {
			steps = append(steps, sc.Steps[i])
		}
		w.Origins = append(w.Origins, run.Origin{Name: o.Name, Plan: t.plans[k], Steps: o.Steps(), Share: o.Share,
			NewRequests: sc.NewOriginRequests(k), BodyLimit: scenario.BodyLimit(steps, sc.Settings.BodyLimit),
			CaptureHeaders: scenario.ResponseHeaders(steps), PerConnection: sc.PerUser(), Dialer: t.dialers[k]})
	}
	return nil
}
