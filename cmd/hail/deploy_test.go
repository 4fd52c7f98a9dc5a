package main

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hail-loadgen/hail/internal/metrics"
)

// Every metric the Grafana dashboard queries is one hail serves.
func TestGrafanaDashboard(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../deploy/grafana/hail.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatal(err)
	}
	served := map[string]bool{}
	ch := make(chan *prometheus.Desc, 64)
	metrics.NewExporter(metrics.Info{}, nil).Describe(ch)
	close(ch)
	name := regexp.MustCompile(`fqName: "([a-z0-9_]+)"`)
	for d := range ch {
		served[name.FindStringSubmatch(d.String())[1]] = true
	}
	used := regexp.MustCompile(`hail_[a-z0-9_]+`)
	n := 0
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			for _, m := range used.FindAllString(tg.Expr, -1) {
				base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(m, "_bucket"), "_sum"), "_count")
				if !served[base] {
					t.Errorf("panel %q queries %s, which hail does not serve", p.Title, m)
				}
				n++
			}
		}
	}
	if n < 10 {
		t.Errorf("only %d metric references", n)
	}
}
