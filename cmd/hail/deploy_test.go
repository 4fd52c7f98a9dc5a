package main

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"gopkg.in/yaml.v3"

	"hail/internal/metrics"
)

// The Kubernetes manifests pass only flags hail has, and use the shard
// index as --shard wants it.
func TestDeployManifests(t *testing.T) {
	type container struct {
		Args []string `yaml:"args"`
		Env  []struct {
			Name string `yaml:"name"`
		} `yaml:"env"`
	}
	var job struct {
		Spec struct {
			CompletionMode string `yaml:"completionMode"`
			Template       struct {
				Spec struct {
					Containers []container `yaml:"containers"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	for _, tc := range []struct {
		file string
		sub  string
	}{{"shards-job.yaml", ""}, {"merge-job.yaml", "merge"}} {
		raw, err := os.ReadFile("../../deploy/kubernetes/" + tc.file)
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(raw, &job); err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		c := job.Spec.Template.Spec.Containers[0]
		cmd := newRootCmd()
		args := c.Args
		if tc.sub != "" {
			cmd = newMergeCmd()
			args = args[1:]
		}
		for _, a := range args {
			if !strings.HasPrefix(a, "-") {
				continue
			}
			name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
			fl := cmd.Flags().Lookup(name)
			if len(name) == 1 {
				fl = cmd.Flags().ShorthandLookup(name)
			}
			if fl == nil {
				t.Errorf("%s: hail %s has no flag %s", tc.file, tc.sub, a)
			}
		}
		if tc.sub == "" {
			if job.Spec.CompletionMode != "Indexed" || !strings.Contains(strings.Join(args, " "), "--shard=$(JOB_COMPLETION_INDEX)/$(SHARDS)") {
				t.Errorf("shards job: mode %q, args %v", job.Spec.CompletionMode, args)
			}
			if _, _, err := parseShard(strings.NewReplacer("$(JOB_COMPLETION_INDEX)", "0", "$(SHARDS)", "4").Replace("$(JOB_COMPLETION_INDEX)/$(SHARDS)")); err != nil {
				t.Error(err)
			}
		}
	}
}

// Every metric the Grafana dashboard queries is one hail serves.
func TestGrafanaDashboard(t *testing.T) {
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
	name := regexp.MustCompile(`fqName: "([a-z_]+)"`)
	for d := range ch {
		served[name.FindStringSubmatch(d.String())[1]] = true
	}
	used := regexp.MustCompile(`hail_[a-z_]+`)
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
