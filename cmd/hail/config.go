package main

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/reqgen"
	"github.com/hail-loadgen/hail/internal/run"
)

// secretHeaders are redacted from reports and --debug unless --show-secrets.
var secretHeaders = []string{"Authorization", "Cookie", "Proxy-Authorization", "Set-Cookie"}

// extraSecrets are the names given with --redact.
var extraSecrets []string

func isSecret(name string) bool {
	for _, s := range extraSecrets {
		if strings.EqualFold(s, name) {
			return true
		}
	}
	for _, s := range secretHeaders {
		if strings.EqualFold(s, name) {
			return true
		}
	}
	return false
}

// modelName names the model of a run of p with w (nil: the plan's own
// requests), as configurations and the request log record it.
func modelName(p *plan.Plan, w *run.Workload) string {
	if run.OpenModel(p, w) {
		return "open"
	}
	return "closed"
}

// redactedHeaders maps header (or gRPC metadata) names to values, secret
// values replaced by "[redacted]" unless show.
func redactedHeaders(kv [][2]string, show bool) map[string]string {
	out := map[string]string{}
	for _, h := range kv {
		v := h[1]
		if isSecret(h[0]) && !show {
			v = "[redacted]"
		}
		out[h[0]] = v
	}
	return out
}

// redactedConfig is the run's configuration as stored in the Result. Its
// url is what the run's URLs are made from: the URL, or with
// --urls-from-file or --rand-regex-url the file or the regular expression
// ("urls" says which), so runs of one pattern compare.
func redactedConfig(p *plan.Plan, f *loadFlags, gen *reqgen.Gen) map[string]any {
	show := f.dbg.showSecrets
	c := map[string]any{
		"url": redactedURL(p.URL, show), "method": p.Method, "headers": redactedHeaders(p.Headers, show), "connections": p.Connections,
		"requests": p.Requests, "duration_seconds": p.Duration.Seconds(), "rate": p.Rate, "model": modelName(p, nil),
		"burst_delay_seconds": p.BurstEvery.Seconds(), "burst_rate": p.BurstSize,
		"wait_ongoing": p.WaitOngoing, "pacing_granularity_seconds": p.Pacing().Seconds(), "timeout_seconds": p.Timeout.Seconds(), "connect_timeout_seconds": p.ConnectTimeout.Seconds(),
		"redirects": p.MaxRedirects, "http_version": map[bool]string{true: "1.0", false: "1.1"}[p.HTTP10],
		"keepalive": p.KeepAlive, "compression": p.Compression, "host": p.Host, "unix_socket": p.UnixSocket,
		"insecure": p.Insecure, "engine": p.Engine, "bodies": len(p.Bodies),
	}
	switch {
	case f.urls.fromFile:
		c["url"], c["urls"] = gen.Pattern(), "file"
	case f.urls.regex:
		c["url"], c["urls"] = gen.Pattern(), "regex"
	}
	if f.req.awsSigV4 != "" {
		c["aws_sigv4"] = f.req.awsSigV4 // region and service; the keys stay out
	}
	transportConfig(c, p, show)
	return c
}

// transportConfig adds the HTTP version, streams, vsock, proxy (credentials
// redacted) and client certificate settings.
func transportConfig(c map[string]any, p *plan.Plan, show bool) {
	if p.HTTPVersion != "" {
		c["http_version"] = p.HTTPVersion
		c["streams_per_connection"] = p.StreamsPerConn()
	}
	if p.Vsock {
		c["vsock_addr"] = fmt.Sprintf("%d:%d", p.VsockCID, p.VsockPort)
	}
	if p.VsockUDS != "" {
		c["vsock_uds"] = fmt.Sprintf("%s:%d", p.VsockUDS, p.VsockUDSPort)
	}
	if p.Proxy != nil {
		c["proxy"] = p.Proxy.Redacted()
		if show {
			c["proxy"] = p.Proxy.String()
		}
		ph := map[string]string{}
		for _, h := range p.ProxyHeaders {
			v := h[1]
			if isSecret(h[0]) && !show {
				v = "[redacted]"
			}
			ph[h[0]] = v
		}
		c["proxy_headers"] = ph
	}
	if p.Cert != "" {
		c["cert"], c["key"] = p.Cert, p.Key
	}
}

// redactedURL is u as reports, logs and metrics show it: without user information and, unless
// show (--show-secrets), with the --redact query parameters' values hidden.
func redactedURL(u *url.URL, show bool) string {
	c := *u
	c.User = nil
	if !show {
		c.RawQuery = redactQuery(c.RawQuery)
	}
	return c.String()
}

// redactScenarioConfig hides the --redact query parameters in the steps' targets of a scenario's
// configuration (scenario.Config), as they are written in the file (templates unexpanded).
func redactScenarioConfig(c map[string]any) map[string]any {
	steps, _ := c["steps"].([]map[string]any)
	for _, st := range steps {
		if t, ok := st["target"].(string); ok {
			if path, q, found := strings.Cut(t, "?"); found {
				st["target"] = path + "?" + redactQuery(q)
			}
		}
	}
	return c
}

// redactQuery replaces the values of query parameters named by --redact.
func redactQuery(raw string) string {
	if raw == "" || len(extraSecrets) == 0 {
		return raw
	}
	parts := strings.Split(raw, "&")
	for i, kv := range parts {
		name, _, _ := strings.Cut(kv, "=")
		if un, err := url.QueryUnescape(name); err == nil {
			name = un
		}
		for _, s := range extraSecrets {
			if name == s {
				parts[i] = kv[:strings.IndexByte(kv+"=", '=')] + "=[redacted]"
			}
		}
	}
	return strings.Join(parts, "&")
}
