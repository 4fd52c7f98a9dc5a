package main

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/hail-loadgen/hail/internal/grpccall"
	"github.com/hail-loadgen/hail/internal/run"
	"github.com/hail-loadgen/hail/internal/scenario"
)

// grpcTemplated makes the workload of a call whose data or metadata has
// templates ({{counter}}, {{uuid}}, …): a one-step scenario with the call
// as its gRPC step, so that templates expand and the data is encoded per
// call exactly as in hail run. It returns the messages per call.
func grpcTemplated(g *grpcRun, f *grpcFlags, data []byte) (*run.Workload, int, error) {
	m := g.method
	call := map[string]any{"call": m.Name()}
	if data != nil {
		call["data"] = string(data)
	}
	if len(g.meta) > 0 {
		md := map[string]string{}
		for _, kv := range g.meta {
			md[kv[0]] = kv[1]
		}
		call["metadata"] = md
	}
	if f.streamCount > 0 {
		call["stream_count"] = f.streamCount
	}
	host := g.plan.URL.Host
	if g.plan.Host != "" {
		host = g.plan.Host // the base only names the :authority here; the plan dials
	}
	doc := map[string]any{"base": (&url.URL{Scheme: g.plan.URL.Scheme, Host: host}).String(),
		"steps": []any{map[string]any{"name": "call", "grpc": call}}}
	if g.plan.Timeout > 0 {
		doc["timeout"] = g.plan.Timeout.String()
	}
	src, err := yaml.Marshal(doc)
	if err != nil {
		return nil, 0, err
	}
	sc, err := scenario.Parse("hail grpc", src, scenario.LoadOptions{LengthGiven: true,
		GRPC: func(*url.URL, bool) (grpccall.Source, error) { return g.source, nil }})
	if err != nil {
		return nil, 0, templateError(err, f)
	}
	msgs := 1
	if m.ClientStreams() {
		msgs = f.streamCount
		if list, err := grpccall.SplitData(data); msgs == 0 && err == nil {
			msgs = len(list)
		}
	}
	return &run.Workload{Steps: []string{""}, NewRequests: sc.NewRequests}, msgs, nil
}

// templateError phrases a problem of the one-step scenario in the flags'
// terms: "-d: …", "-m KEY: …".
func templateError(err error, f *grpcFlags) error {
	var se *scenario.Error
	if !errors.As(err, &se) {
		return err
	}
	msg := se.Msg
	switch {
	case strings.HasPrefix(msg, "call.grpc.data: "):
		return fmt.Errorf("%s: %s", dataFlag(f), strings.TrimPrefix(msg, "call.grpc.data: "))
	case strings.HasPrefix(msg, "call.grpc.metadata."):
		return fmt.Errorf("-m %s", strings.TrimPrefix(msg, "call.grpc.metadata."))
	}
	return fmt.Errorf("%s", strings.TrimPrefix(msg, "call: "))
}
