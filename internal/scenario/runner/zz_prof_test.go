package runner

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/grpccall"
	"github.com/hail-loadgen/hail/internal/run"
	"github.com/hail-loadgen/hail/internal/scenario"
	"net/url"
)

func TestZZProf(t *testing.T) {
	file, base := os.Getenv("PROF_FILE"), os.Getenv("PROF_BASE")
	if file == "" {
		t.Skip()
	}
	s, err := scenario.Load(file, scenario.LoadOptions{Base: base, LengthGiven: true, GRPC: func(u *url.URL, insecure bool) (grpccall.Source, error) {
		return grpccall.FromProto([]string{"../../grpcserve/hail.proto"}, nil)
	}})
	if err != nil {
		t.Fatal(err)
	}
	s.Settings.Connections, s.Settings.Stages, s.Settings.StageKind, s.Settings.Duration = 64, nil, "", 5*time.Second
	sched := s.Settings.Schedule()
	p, err := s.Plan(sched)
	if err != nil {
		t.Fatal(err)
	}
	res, err := run.Run(context.Background(), p, run.Options{Workload: Workload(s, sched)})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("requests %d rps %.0f cpu/req %.1fus status %v errors %v", res.Hail.Counts.Requests, res.Summary.RequestsPerSec, res.Hail.Generator.CPUPerRequestUS, res.StatusCodeDistribution, res.ErrorDistribution)
}
