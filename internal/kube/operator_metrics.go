package kube

import (
	"github.com/prometheus/client_golang/prometheus"
)

// operatorMetrics are hail operator's own metrics, in a registry of its
// own (hail's Prometheus client, as a run's --metrics-addr).
type operatorMetrics struct {
	reg     *prometheus.Registry
	leader  prometheus.Gauge
	started prometheus.Counter
	ended   *prometheus.CounterVec
	errors  prometheus.Counter
	writes  prometheus.Counter
}

func newOperatorMetrics(o *Operator) *operatorMetrics {
	m := &operatorMetrics{
		reg:     prometheus.NewRegistry(),
		leader:  prometheus.NewGauge(prometheus.GaugeOpts{Name: "hail_operator_leader", Help: "1 while this replica leads (holds the Lease)."}),
		started: prometheus.NewCounter(prometheus.CounterOpts{Name: "hail_operator_runs_started_total", Help: "HailRuns this replica started or adopted."}),
		ended:   prometheus.NewCounterVec(prometheus.CounterOpts{Name: "hail_operator_runs_ended_total", Help: "HailRuns this replica ended, by final phase."}, []string{"phase"}),
		errors:  prometheus.NewCounter(prometheus.CounterOpts{Name: "hail_operator_reconcile_errors_total", Help: "Reconciles that failed (tried again)."}),
		writes:  prometheus.NewCounter(prometheus.CounterOpts{Name: "hail_operator_status_updates_total", Help: "HailRun status updates written."}),
	}
	m.reg.MustRegister(m.leader, m.started, m.ended, m.errors, m.writes, phaseCollector{o})
	return m
}

// phaseCollector counts the HailRuns the operator sees, by phase.
type phaseCollector struct{ o *Operator }

var phaseDesc = prometheus.NewDesc("hail_operator_hailruns", "HailRuns seen, by phase (\"\" before the operator took one up).", []string{"phase"}, nil)

func (c phaseCollector) Describe(ch chan<- *prometheus.Desc) { ch <- phaseDesc }

func (c phaseCollector) Collect(ch chan<- prometheus.Metric) {
	counts := map[string]int{}
	for _, p := range []string{PhaseValidating, PhaseWaiting, PhaseRunning, PhaseMerging, PhaseSucceeded, PhaseFailed} {
		counts[p] = 0
	}
	c.o.mu.Lock()
	stores := c.o.stores
	c.o.mu.Unlock()
	for _, s := range stores {
		for _, obj := range s.List() {
			if hr, ok := obj.(*HailRun); ok {
				counts[hr.Status.Phase]++
			}
		}
	}
	for p, n := range counts {
		ch <- prometheus.MustNewConstMetric(phaseDesc, prometheus.GaugeValue, float64(n), p)
	}
}
