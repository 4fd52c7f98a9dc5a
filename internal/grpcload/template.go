package grpcload

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/hail-loadgen/hail/internal/grpccall"
	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/run"
	"github.com/hail-loadgen/hail/internal/scenario"
)

// templatedWorkload makes the workload of a call whose data or metadata
// has templates ({{counter}}, {{uuid}}, …): a one-step scenario with the
// call as its gRPC step, so that templates expand and the data is encoded
// per call exactly as in hail run. It returns the messages per call.
func templatedWorkload(p *plan.Plan, g *Load, c Call) (*run.Workload, int, error) {
	m := g.Method
	call := map[string]any{"call": m.Name()}
	if c.Data != nil {
		call["data"] = string(c.Data)
	}
	if len(c.Metadata) > 0 {
		md := map[string]string{}
		for _, kv := range c.Metadata {
			md[kv[0]] = kv[1]
		}
		call["metadata"] = md
	}
	if c.StreamCount > 0 {
		call["stream_count"] = c.StreamCount
	}
	host := p.URL.Host
	if p.Host != "" {
		host = p.Host // the base only names the :authority here; the plan dials
	}
	doc := map[string]any{"base": (&url.URL{Scheme: p.URL.Scheme, Host: host}).String(),
		"steps": []any{map[string]any{"name": "call", "grpc": call}}}
	if p.Timeout > 0 {
		doc["timeout"] = p.Timeout.String()
	}
	src, err := yaml.Marshal(doc)
	if err != nil {
		return nil, 0, err
	}
	sc, err := scenario.Parse("hail grpc", src, scenario.LoadOptions{LengthGiven: true,
		GRPC: func(*url.URL, bool) (grpccall.Source, error) { return g.Source, nil }})
	if err != nil {
		return nil, 0, templateError(err, c.Names)
	}
	msgs := 1
	if m.ClientStreams() {
		msgs = c.StreamCount
		if list, err := grpccall.SplitData(c.Data); msgs == 0 && err == nil {
			msgs = len(list)
		}
	}
	return &run.Workload{Steps: []string{""}, NewRequests: sc.NewRequests}, msgs, nil
}

// templateError phrases a problem of the one-step scenario in the
// caller's terms: "-d: …", "-m KEY: …".
func templateError(err error, n Names) error {
	var se *scenario.Error
	if !errors.As(err, &se) {
		return err
	}
	msg := se.Msg
	switch {
	case strings.HasPrefix(msg, "call.grpc.data: "):
		return fmt.Errorf("%s: %s", n.Data, strings.TrimPrefix(msg, "call.grpc.data: "))
	case strings.HasPrefix(msg, "call.grpc.metadata."):
		return fmt.Errorf("%s %s", n.Metadata, strings.TrimPrefix(msg, "call.grpc.metadata."))
	}
	return fmt.Errorf("%s", strings.TrimPrefix(msg, "call: "))
}
