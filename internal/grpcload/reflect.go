package grpcload

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"google.golang.org/grpc/metadata"

	"github.com/hail-loadgen/hail/internal/grpccall"
	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/transport"
)

// ReflectionSource connects for server reflection through hail's own
// transport, sending rm with each question; ctx bounds the name lookup
// and ends every question (a signal during hail's setup).
func ReflectionSource(ctx context.Context, p *plan.Plan, target string, rm [][2]string) (grpccall.Source, error) {
	topt, err := p.TransportOptions(p.URL)
	if err != nil {
		return nil, err
	}
	d, err := transport.NewDialer(ctx, topt)
	if err != nil {
		return nil, err
	}
	authority := target
	if p.Host != "" {
		authority = p.Host
	}
	conn, err := grpccall.Dial(d, authority)
	if err != nil {
		return nil, fmt.Errorf("reflection: %v", err)
	}
	md := metadata.MD{}
	for _, kv := range rm {
		md.Append(kv[0], kv[1])
	}
	return grpccall.FromReflection(ctx, conn, md, target, p.ConnectTimeout+10*time.Second), nil
}

// ScenarioSource is the schema of a scenario's gRPC steps when its file
// names none: the server at base, probed (a TLS mismatch is one line) and
// asked by reflection. Cancelling ctx stops the probe and the reflection.
func ScenarioSource(ctx context.Context, base *url.URL, insecure bool) (grpccall.Source, error) {
	p := &plan.Plan{URL: base, HTTPVersion: plan.HTTP2, Insecure: insecure, ConnectTimeout: plan.DefaultConnectTimeout, KeepAlive: true}
	topt, err := p.TransportOptions(base)
	if err != nil {
		return nil, err
	}
	probe, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := grpccall.Probe(probe, topt, base.Host); err != nil {
		return nil, SchemeHint(err, "base: ", base)
	}
	return ReflectionSource(ctx, p, base.Host, nil)
}

// SchemeHint rephrases a probe's advice about --insecure for a target
// whose URL's scheme chooses TLS: write (the key or field before the
// URL) http://HOST for h2c, https://HOST for TLS.
func SchemeHint(err error, write string, u *url.URL) error {
	msg := err.Error()
	msg = strings.ReplaceAll(msg, "add --insecure (plaintext h2c, as ghz)", "write "+write+"http://"+u.Host+" (h2c)")
	msg = strings.ReplaceAll(msg, "drop --insecure", "write "+write+"https://"+u.Host)
	return errors.New(msg)
}
