package plan

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"
)

func testPlan() *Plan {
	u, _ := url.Parse("http://127.0.0.1:8080/")
	return &Plan{URL: u, Method: "GET", Connections: 50, KeepAlive: true, Engine: "auto"}
}

func TestValidateSchedule(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(p *Plan)
		want string // "" for valid
	}{
		{"years", func(p *Plan) { p.Requests, p.Rate = 5, 1e-9 }, "-q 1e-09: with -n 5 the last request would be due after 127 years"},
		{"beyond time.Duration", func(p *Plan) { p.Requests, p.Rate = 5, 1e-12 }, "years"},
		{"bursts", func(p *Plan) { p.Requests, p.BurstEvery, p.BurstSize = 1000, time.Hour, 1 }, "the last request would be due after 42 days"},
		{"a week is allowed", func(p *Plan) { p.Requests, p.Rate = 7*24*3600+1, 1 }, ""},
		{"one request at any rate", func(p *Plan) { p.Requests, p.Rate = 1, 1e-12 }, ""},
		{"-z bounds it", func(p *Plan) { p.Duration, p.Rate = time.Second, 1e-9 }, ""},
		{"closed model", func(p *Plan) { p.Requests = 1 << 40 }, ""},
	} {
		p := testPlan()
		tc.set(p)
		err := p.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "":
			var fe *FieldError
			if !errors.As(err, &fe) || !strings.Contains(fe.Message(FlagName), tc.want) || !strings.Contains(fe.Message(FlagName), "-z") {
				t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
			}
		}
	}
}

func TestNotes(t *testing.T) {
	p := testPlan()
	p.Requests, p.Rate = 3, 0.0005
	if n := p.Notes(FlagName); len(n) != 1 || n[0] != "-q 0.0005: with -n 3 the run lasts 1h6m40s: the last request is due then (-z bounds the run)" {
		t.Errorf("long schedule: %q", n)
	}
	p = testPlan()
	p.Duration, p.Rate = 2*time.Second, 0.1
	if n := p.Notes(FlagName); len(n) != 1 || n[0] != "-z 2s: at -q 0.1 only the first request is due within it" {
		t.Errorf("short -z: %q", n)
	}
	p = testPlan()
	p.Requests, p.Rate = 1000, 10
	if n := p.Notes(FlagName); len(n) != 0 {
		t.Errorf("ordinary run: %q", n)
	}
}

func TestFitConnections(t *testing.T) {
	for _, tc := range []struct {
		name    string
		set     func(p *Plan)
		conns   int
		changed bool
	}{
		{"closed", func(p *Plan) { p.Connections, p.Requests = 1_000_000, 2000 }, 2000, true},
		{"open", func(p *Plan) { p.Connections, p.Requests, p.Rate = 100, 10, 5 }, 10, true},
		{"streams", func(p *Plan) { p.Connections, p.Requests, p.HTTPVersion, p.Streams = 1000, 95, "2", 10 }, 10, true},
		{"enough already", func(p *Plan) { p.Connections, p.Requests = 8, 8 }, 8, false},
		{"-z", func(p *Plan) { p.Connections, p.Duration = 1000, time.Second }, 1000, false},
		{"-z with -n", func(p *Plan) { p.Connections, p.Requests, p.Duration = 1000, 5, time.Second }, 1000, false},
	} {
		p := testPlan()
		tc.set(p)
		note := p.FitConnections(FlagName)
		if p.Connections != tc.conns || (note != "") != tc.changed {
			t.Errorf("%s: %d connections, note %q", tc.name, p.Connections, note)
		}
		if tc.changed && !strings.Contains(note, "lowered to") {
			t.Errorf("%s: note %q", tc.name, note)
		}
	}
}
