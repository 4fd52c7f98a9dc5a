package plan

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"
)

func validPlan(t *testing.T) *Plan {
	t.Helper()
	u, err := url.Parse("http://127.0.0.1:8080/")
	if err != nil {
		t.Fatal(err)
	}
	return &Plan{URL: u, Method: "GET", Connections: 4, Requests: 10, KeepAlive: true, Engine: "auto"}
}

// Every problem is a *FieldError naming its field, rendered with Go field
// names by Error and with flags by Message(FlagName).
func TestValidate(t *testing.T) {
	u := func(s string) *url.URL { x, _ := url.Parse(s); return x }
	for _, tc := range []struct {
		name  string
		edit  func(p *Plan)
		field string
		cli   string // in Message(FlagName)
		api   string // in Error
	}{
		{"no URL", func(p *Plan) { p.URL = nil }, "URL", "URL: none given", "URL: none given"},
		{"no connections", func(p *Plan) { p.Connections = 0 }, "Connections", "-c 0: need at least one connection", "Connections 0: need"},
		{"too many connections", func(p *Plan) { p.Connections = 2_000_000 }, "Connections", "-c 2000000: at most", "Connections 2000000"},
		{"nothing to do", func(p *Plan) { p.Requests = 0 }, "Requests", "-n 0: give a number of requests (-n) or a duration (-z)", "(Requests) or a duration (Duration)"},
		{"negative rate", func(p *Plan) { p.Rate = -1 }, "Rate", "-q -1: the rate must be positive", "Rate -1"},
		{"negative burst", func(p *Plan) { p.BurstEvery = -time.Second }, "BurstEvery", "--burst-delay: must be positive", "BurstEvery: must"},
		{"negative timeout", func(p *Plan) { p.Timeout = -1 }, "Timeout", "-t: must be positive", "Timeout: must"},
		{"negative connect timeout", func(p *Plan) { p.ConnectTimeout = -1 }, "ConnectTimeout", "--connect-timeout: must be positive", "ConnectTimeout:"},
		{"negative redirects", func(p *Plan) { p.MaxRedirects = -1 }, "MaxRedirects", "-r -1:", "MaxRedirects -1"},
		{"both families", func(p *Plan) { p.IPv4, p.IPv6 = true, true }, "IPv4", "--ipv4 and --ipv6 exclude each other", "IPv4 and IPv6 exclude"},
		{"unknown engine", func(p *Plan) { p.Engine = "epoll" }, "Engine", `--engine "epoll": choose net, uring or auto`, `Engine "epoll"`},
		{"bad scheme", func(p *Plan) { p.URL = u("ftp://127.0.0.1/") }, "URL", "the scheme must be http or https", "URL"},
		{"no host", func(p *Plan) { p.URL = u("http:///x") }, "URL", "has no host", "has no host"},
		{"bad port", func(p *Plan) { p.URL = u("http://127.0.0.1:99999/") }, "URL", `port "99999" is not a number`, "port"},
		{"bad HTTP version", func(p *Plan) { p.HTTPVersion = "4" }, "HTTPVersion", `--http-version "4": choose 1.0, 1.1, 2 or 3`, `HTTPVersion "4"`},
		{"streams without h2", func(p *Plan) { p.Streams = 4 }, "Streams", "-p 4: several streams per connection need HTTP/2 or HTTP/3: give --http2 (or --http-version 2 or 3)", "Streams 4"},
		{"streams without keep-alive", func(p *Plan) { p.Streams, p.HTTPVersion, p.KeepAlive = 4, "2", false }, "Streams", "(--disable-keepalive) carries one stream", "(KeepAlive)"},
		{"h3 over http", func(p *Plan) { p.HTTPVersion = "3" }, "HTTPVersion", "--http-version 3: needs an https:// URL", "HTTPVersion 3"},
		{"h3 over a unix socket", func(p *Plan) { p.URL, p.HTTPVersion, p.UnixSocket = u("https://x/"), "3", "/s" }, "HTTPVersion", "cannot use --unix-socket, --vsock-addr or --vsock-uds", "cannot use UnixSocket"},
		{"both vsocks", func(p *Plan) { p.Vsock, p.VsockUDS = true, "/v" }, "Vsock", "--vsock-addr and --vsock-uds exclude each other", "Vsock and VsockUDS"},
		{"key without cert", func(p *Plan) { p.URL, p.Key = u("https://x/"), "k.pem" }, "Key", `--key "k.pem": needs --cert`, `Key "k.pem": needs Cert`},
		{"bad method", func(p *Plan) { p.Method = "G T" }, "Method", `-m: invalid method "G T"`, "Method: invalid method"},
		{"bad header", func(p *Plan) { p.Headers = [][2]string{{"X Y", "1"}} }, "Headers", `-H: invalid header name "X Y"`, "Headers: invalid header name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := validPlan(t)
			tc.edit(p)
			err := p.Validate()
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Validate() = %v, want a *FieldError", err)
			}
			if fe.Field != tc.field {
				t.Errorf("field %q, want %q (%v)", fe.Field, tc.field, err)
			}
			if m := fe.Message(FlagName); !strings.Contains(m, tc.cli) {
				t.Errorf("CLI message %q lacks %q", m, tc.cli)
			}
			if !strings.Contains(err.Error(), tc.api) {
				t.Errorf("Error() %q lacks %q", err.Error(), tc.api)
			}
		})
	}
	if err := validPlan(t).Validate(); err != nil {
		t.Errorf("a valid plan: %v", err)
	}
}
