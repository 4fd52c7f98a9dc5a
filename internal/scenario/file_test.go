package scenario

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/http1"
	"github.com/hail-loadgen/hail/internal/plan"
)

const goodFile = `name: demo
base: http://127.0.0.1:8080/api
duration: 2s
variables:
  tenant: acme
headers:
  X-Tenant: "{{var.tenant}}"
steps:
  - name: create
    weight: 70
    method: post
    path: /items
    headers: {Content-Type: application/json}
    body: '{"name":"vm-{{counter}}"}'
    capture:
      vms: {json: id}
  - name: query
    weight: 20
    path: /items/{{pick vms}}
  - name: destroy
    weight: 10
    method: DELETE
    path: /items/{{take vms}}
  - name: plain
    weight: 1
    path: /health
thresholds:
  - p99 < 50ms
  - {expr: error_rate < 0.1%, step: destroy, abort_on_fail: true}
`

// mustParse compiles src as t.yaml, failing the test on an error.
func mustParse(t *testing.T, src string) *Scenario {
	t.Helper()
	s, err := Parse("t.yaml", []byte(src), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func parse(t *testing.T, src string) (*Scenario, error) {
	t.Helper()
	return Parse("t.yaml", []byte(src), LoadOptions{Env: func(string) (string, bool) { return "", false }})
}

func TestLoadGood(t *testing.T) {
	s, err := parse(t, goodFile)
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "demo" || len(s.Steps) != 4 || s.Settings.Duration != 2*time.Second || len(s.Thresholds) != 2 {
		t.Fatalf("loaded %+v", s)
	}
	if s.Steps[0].Method != "POST" || s.Steps[0].Weight != 70 {
		t.Errorf("create: %s weight %g", s.Steps[0].Method, s.Steps[0].Weight)
	}
	if s.Thresholds[1].Step != "destroy" || !s.Thresholds[1].AbortOnFail {
		t.Errorf("threshold: %+v", s.Thresholds[1])
	}
	// A step with nothing to expand is pre-encoded, byte for byte what
	// http1.AppendRequest would write.
	plain := s.Steps[3]
	if len(plain.variants) != 1 {
		t.Fatalf("plain step not pre-encoded")
	}
	want := "GET /api/health HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nX-Tenant: acme\r\nUser-Agent: hail/"
	if !strings.HasPrefix(string(plain.variants[0]), want) || !strings.HasSuffix(string(plain.variants[0]), "\r\n\r\n") {
		t.Errorf("plain request:\n%q", plain.variants[0])
	}
	// The create step expands its body and frames it.
	v := newVU(s, 0)
	req, ok := v.build(0)
	if !ok {
		t.Fatal("create did not build")
	}
	if !strings.HasPrefix(string(req), "POST /api/items HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nX-Tenant: acme\r\nContent-Type: application/json\r\n") ||
		!strings.HasSuffix(string(req), "Content-Length: 15\r\n\r\n{\"name\":\"vm-1\"}") {
		t.Errorf("create request:\n%q", req)
	}
	// query and destroy yield while the pool is empty.
	if _, ok := v.build(1); ok {
		t.Error("query built with an empty pool")
	}
	s.Pools[0].Put("abc", 0)
	req, ok = v.build(2)
	if !ok || !strings.HasPrefix(string(req), "DELETE /api/items/abc HTTP/1.1\r\n") {
		t.Errorf("destroy: %v %q", ok, req)
	}
	if _, ok := v.build(2); ok {
		t.Error("destroy built twice from one value")
	}
	if s.Steps[1].yields[0].Load() != 1 || s.Steps[2].yields[0].Load() != 1 {
		t.Errorf("yields: query %d destroy %d", s.Steps[1].yields[0].Load(), s.Steps[2].yields[0].Load())
	}
}

// Every bad file gets one error naming FILE:LINE:COLUMN, what was expected
// and what was found.
func TestLoadErrors(t *testing.T) {
	const head = "base: http://127.0.0.1:8080\nduration: 1s\n"
	const create = "steps:\n  - name: create\n    method: POST\n    path: /items\n    capture:\n      vms: {json: id}\n"
	for _, tc := range []struct {
		name, src, want string
	}{
		{"unknown key", head + "duraton: 1s\n" + create, `t.yaml:3:1: scenario: unknown key "duraton": did you mean "duration"?`},
		{"unknown step key", head + create + "    wieght: 3\n", `t.yaml:9:5: steps[0]: unknown key "wieght": did you mean "weight"?`},
		{"wrong type", head + "connections: many\n" + create, `t.yaml:3:14: connections: expected a whole number, found "many"`},
		{"steps not a list", head + "steps: {a: 1}\n", `t.yaml:3:8: steps: expected a list (lines starting with -), found a mapping`},
		{"undefined pool", head + create + "  - name: get\n    path: /items/{{take vmz}}\n", `t.yaml:10:18: get.path: undefined pool "vmz": no step captures into it`},
		{"undefined variable", head + "variables: {tenant: acme}\n" + create + "    body: '{\"t\":\"{{var.tenat}}\"}'\n", `t.yaml:10:18: create.body: undefined variable "tenat": expected one of the file's variables (tenant)`},
		{"undefined capture", head + create + "  - name: get\n    path: /x?t={{last tok}}\n", `t.yaml:10:16: get.path: undefined capture "tok"`},
		{"bad template", head + create + "  - name: get\n    path: /x/{{counter\n", `t.yaml:10:14: get.path: unclosed "{{"`},
		{"mixed stages", "base: http://127.0.0.1:8080\n" + create + "stages:\n  - {duration: 1s, connections: 5}\n  - {duration: 1s, rate: 100}\n", `t.yaml:10:20: stages[1]: expected connections like the stages before it (one model per run), found rate`},
		{"zero stages", "base: http://127.0.0.1:8080\n" + create + "stages:\n  - {duration: 0s, connections: 5}\n", `t.yaml:9:3: stages: they last 0s in all`},
		{"no connections", "base: http://127.0.0.1:8080\n" + create + "stages:\n  - {duration: 2s, connections: 0}\n", `t.yaml:9:3: stages: no stage opens a connection`},
		{"negative stage", "base: http://127.0.0.1:8080\n" + create + "stages:\n  - {duration: -1s, connections: 3}\n", `t.yaml:9:16: stages[0].duration: expected a duration ≥ 0, found -1s`},
		{"stage without target", "base: http://127.0.0.1:8080\n" + create + "stages:\n  - {duration: 1s}\n", `t.yaml:9:5: stages[0]: expected a target: connections (closed model) or rate (open model), found none`},
		{"stages and duration", head + create + "stages:\n  - {duration: 1s, connections: 3}\n", `t.yaml:2:11: duration: the stages set the run's length (1s)`},
		{"stages and connections", "base: http://127.0.0.1:8080\nconnections: 9\n" + create + "stages:\n  - {duration: 1s, connections: 3}\n", `t.yaml:2:1: connections: the stages set the number of connections`},
		{"flow step", head + create + "flows:\n  - name: f\n    steps: [create, lgoin]\n", `t.yaml:11:21: flow f.steps: undefined step "lgoin": expected one of create`},
		{"threshold step", head + create + "thresholds:\n  - {expr: p99 < 1ms, step: crate}\n", `t.yaml:10:29: thresholds[0].step: undefined step "crate"`},
		{"warmup too long", "base: http://127.0.0.1:8080\n" + create + "stages:\n  - {duration: 2s, connections: 3, warmup: 2s}\n", `t.yaml:9:44: stages[0].warmup: 2s leaves nothing of the 2s stage to measure`},
		{"numeric stage name", "base: http://127.0.0.1:8080\n" + create + "stages:\n  - {duration: 2s, connections: 3, name: 7}\n", `t.yaml:9:42: stages[0].name: expected a name with a letter in it`},
		{"stage name twice", "base: http://127.0.0.1:8080\n" + create + "stages:\n  - {duration: 2s, connections: 3, name: a}\n  - {duration: 2s, connections: 3, name: a}\n", `t.yaml:10:5: stages[1].name: "a" names an earlier stage too`},
		{"threshold stage", "base: http://127.0.0.1:8080\n" + create + "stages:\n  - {duration: 2s, connections: 3, name: low}\nthresholds:\n  - {expr: p99 < 1ms, stage: 2}\n", `t.yaml:11:30: thresholds[0].stage: no stage "2": expected a stage number from 1 to 1 or a name: low`},
		{"threshold stage without stages", head + create + "thresholds:\n  - {expr: p99 < 1ms, stage: 1}\n", `t.yaml:10:30: thresholds[0].stage: the scenario has no stages`},
		{"threshold step and stage", "base: http://127.0.0.1:8080\n" + create + "stages:\n  - {duration: 2s, connections: 3}\nthresholds:\n  - {expr: p99 < 1ms, step: create, stage: 1}\n", `t.yaml:11:44: thresholds[0]: expected step or stage, found both`},
		{"threshold expr", head + create + "thresholds:\n  - p99 < fast\n", `t.yaml:10:5: thresholds[0]: threshold "p99 < fast": p99 is a latency: expected a duration`},
		{"yaml syntax", head + "steps:\n  - name: a\n   path: /\n", `t.yaml:3:1: invalid YAML: did not find expected '-' indicator`},
		{"duplicate key", head + create + "    method: GET\n", `t.yaml:9:5: steps[0]: duplicate key "method" (first at line 5)`},
		{"path without base", "duration: 1s\nsteps:\n  - name: a\n    path: /x\n", `t.yaml:4:11: a.path: a path needs a base URL`},
		{"no steps", head, `t.yaml:1:1: scenario: expected a steps list`},
		{"bad capture regex", head + "steps:\n  - name: a\n    path: /\n    capture:\n      x: {regex: 'a('}\n", `t.yaml:7:18: a.capture.x.regex: expected a regular expression, found "a("`},
		{"capture header", head + "steps:\n  - name: a\n    path: /\n    capture:\n      x: {header: 'X Bad'}\n", `t.yaml:7:19: a.capture.x.header: expected a header name`},
		{"two capture kinds", head + "steps:\n  - name: a\n    path: /\n    capture:\n      x: {json: id, status: true}\n", `t.yaml:7:21: a.capture.x: expected one of json, header, regex, status or llm, found several`},
		{"body twice", head + "steps:\n  - name: a\n    path: /\n    body: x\n    body_file: f\n", `t.yaml:7:5: a: give one of body, body_json, body_file and body_lines, found more`},
		{"never runs", head + create + "  - name: idle\n    weight: 0\n    path: /\n", `t.yaml:9:5: step idle never runs: expected a weight > 0 or a place in a flow`},
		{"content-length", head + create + "    headers: {Content-Length: 5}\n", `t.yaml:9:15: create.headers: Content-Length is set by hail from the body`},
		{"bad method", head + "steps:\n  - name: a\n    method: GE T\n    path: /\n", `t.yaml:5:13: a.method: expected a method such as GET, POST or DELETE, found "GE T"`},
		{"space in path", head + "steps:\n  - name: a\n    path: /a b\n", `t.yaml:5:11: a: the request target may not contain ' ': expected it percent-encoded (%20)`},
		{"no length", "base: http://127.0.0.1:8080\n" + create, `t.yaml:1:1: scenario: expected duration, requests or stages`},
		{"nothing can start", head + "pools: {vms: {max: 5}}\nsteps:\n  - name: d\n    path: /{{take vms}}\n    capture: {vms: {json: id}}\n", `t.yaml:5:3: steps: every step needs a captured value before it can run`},
		{"unfilled pool", head + "pools: {ids: {max: 5}}\n" + create, `t.yaml:3:9: pools.ids: nothing fills this pool`},
		{"unset env", head + create + "    headers: {Authorization: 'Bearer {{env.HAIL_NO_SUCH_VAR}}'}\n", `t.yaml:9:38: create.headers.Authorization: environment variable HAIL_NO_SUCH_VAR is not set`},
		{"bad base", "base: 127.0.0.1:8080\nduration: 1s\n" + create, `t.yaml:1:7: base: expected a URL such as http://127.0.0.1:8080, found "127.0.0.1:8080" (no scheme)`},
		{"bool type", head + "keepalive: yes please\n" + create, `t.yaml:3:12: keepalive: expected true or false, found "yes please"`},
		{"empty", "", `t.yaml:1:1: empty scenario`},
		{"think word", head + "think: fast\n" + create, `t.yaml:3:8: think: expected a duration such as 100ms, or a range such as 50ms..150ms, found "fast"`},
		{"think range", head + create + "    think: 150ms..50ms\n", `t.yaml:9:12: create.think: expected a range from low to high such as 50ms..150ms, found 150ms > 50ms`},
		{"think open", head + "rate: 10\n" + create + "    think: 1s\n", `t.yaml:10:12: think: a think time paces each virtual user of the closed model`},
		{"expect key", head + create + "    expect: {stauts: 201}\n", `t.yaml:9:14: create.expect: unknown key "stauts": did you mean "status"?`},
		{"expect status", head + create + "    expect: {status: [201, ok]}\n", `t.yaml:9:28: create.expect.status: expected status codes such as 201, [200, 204] or 2xx (gRPC: OK, NotFound, …), found "ok"`},
		{"expect json value", head + create + "    expect: {json: {id: [1]}}\n", `t.yaml:9:25: create.expect.json.id: expected a string, number, true, false or null, found a list`},
		{"expect json path", head + create + "    expect: {json: {a..b: 1}}\n", `t.yaml:9:21: create.expect.json: JSON path "a..b" has an empty segment`},
		{"expect varies", head + create + "    expect: {body_contains: 'x{{counter}}'}\n", `t.yaml:9:29: create.expect.body_contains: expected a fixed value ({{var.NAME}} and {{env.NAME}} allowed)`},
		{"expect feed", head + "feeds: {u: {file: testdata/users.csv}}\n" + create + "    expect: {body_contains: '{{feed.u.id}}'}\n", `create.expect.body_contains: {{feed.u.id}} is not allowed in create.expect.body_contains`},
		{"body mapping", head + "steps:\n  - name: a\n    path: /\n    body: {a: 1}\n", `t.yaml:6:11: a.body: expected a string, found a mapping: to send it as JSON, write body_json: instead of body:`},
		{"unquoted template", head + "steps:\n  - name: a\n    path: {{pick vms}}\n", `t.yaml:5:11: a.path: found an unquoted {{ … }}, which YAML reads as a mapping: quote the value, as '{{pick vms}}'`},
		{"unquoted in flow", head + "steps:\n  - {name: a, path: /}\n  - {name: b, path: /b?x={{int 1 9}}}\n", `t.yaml:5:26: invalid YAML: a {{ … }} template in a { … } mapping must be quoted: write '/b?x={{int 1 9}}'`},
		{"body_json bad", head + "steps:\n  - name: a\n    path: /\n    body_json: {n: '{{int 9 1}}'}\n", `t.yaml:6:21: a.body_json.n: {{int 9 1}}: expected MIN ≤ MAX, found 9 > 1`},
		{"setup weight", head + create + "setup:\n  - {name: s, path: /, weight: 2}\n", `t.yaml:10:24: setup[0]: unknown key "weight"`},
		{"setup repeat", head + create + "setup:\n  - {name: s, path: /, repeat: all}\n", `t.yaml:10:32: s.repeat: all repeats the step until a pool it takes from is empty, but it has no {{take POOL}}`},
		{"setup repeat count", head + create + "teardown:\n  - {name: s, path: /, repeat: 0}\n", `t.yaml:10:32: s.repeat: expected a count such as 100, or all`},
		{"setup name", head + create + "setup:\n  - {name: create, path: /}\n", `t.yaml:10:12: setup[0].name: duplicate step name "create" (first at line 4)`},
		{"setup in flow", head + create + "setup:\n  - {name: s, path: /}\nflows:\n  - {name: f, steps: [s]}\n", `t.yaml:12:23: flow f.steps: undefined step "s": expected one of create`},
	} {
		_, err := parse(t, tc.src)
		if err == nil {
			t.Errorf("%s: accepted", tc.name)
			continue
		}
		if !strings.HasPrefix(err.Error(), "t.yaml:") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, err, tc.want)
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: the error spans lines: %q", tc.name, err)
		}
	}
}

// body_file and body_lines are read relative to the scenario file.
func TestLoadBodyFiles(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "body.json"), []byte(`{"x":1}`), 0o644)
	os.WriteFile(filepath.Join(dir, "lines.txt"), []byte("one\ntwo\nthree\n"), 0o644)
	src := "base: http://127.0.0.1:8080\nrequests: 10\nsteps:\n  - {name: f, method: PUT, path: /f, body_file: body.json}\n  - {name: l, method: POST, path: /l, body_lines: lines.txt}\n"
	path := filepath.Join(dir, "s.yaml")
	os.WriteFile(path, []byte(src), 0o644)
	s, err := Load(path, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(s.Steps[0].variants[0]), "Content-Length: 7\r\n\r\n{\"x\":1}") {
		t.Errorf("body_file: %q", s.Steps[0].variants[0])
	}
	v := newVU(s, 0)
	for _, want := range []string{"one", "two", "three", "one"} {
		req, _ := v.build(1)
		if !strings.HasSuffix(string(req), "\r\n\r\n"+want) {
			t.Errorf("body_lines: %q, want body %q", req, want)
		}
	}
}

func FuzzLoad(f *testing.F) {
	f.Add(goodFile)
	f.Add("base: http://h:1\nduration: 1s\nsteps:\n  - {name: a, path: '/{{regex \"[a-z]{3}\"}}'}\nstages:\n  - {duration: 1s, rate: 10}\n")
	f.Add("steps: [{name: a, url: 'http://h/{{choice a b}}'}]\nflows: [{name: f, steps: [a, a]}]\nrequests: 3\n")
	f.Add("a: &x [1, *x]\n")
	f.Add("base: http://h:1\nrequests: 1\nvariables: {x: &a [1,2,3]}\nsteps: [{name: a, method: POST, path: /, body_json: {b: &b [*a,*a,*a], c: [*b,*b,*b]}}]\n")
	f.Add("base: http://h:1\nsteps: [{name: a, path: /}]\nstages:\n  - {duration: 2s, connections: 3, ramp: step, warmup: 1s, name: low}\n" +
		"  - {duration: 1s, connections: 1}\nthresholds:\n  - {expr: p99 < 1s, stage: low}\n  - {expr: rps > 1, stage: 2}\n")
	f.Add("base: http://h:1\nrequests: 2\nthink: 1ms..2ms\nsetup: [{name: s, path: /, capture: {p: {json: id}}, repeat: 2}]\n" +
		"steps: [{name: a, method: POST, path: '/{{pick p}}', body_json: {n: '{{int 1 2}}', s: 'x{{uuid}}'}, expect: {status: [200, 2xx], json: {a.b: 1}}}]\n" +
		"teardown: [{name: t, path: '/{{take p}}', repeat: all}]\n")
	f.Add("base: http://h:1\nrequests: 3\nsteps:\n  - {name: m, path: /v1/models, capture: {id: {json: 'data[0].id'}}}\n" +
		"  - {name: a, path: /v1/chat/completions, llm: {model: x, prompt: 'hi \"{{last id}}\"', output_tokens: 2-9, slo: ttft=1s, conversation: c, max_context_tokens: 5}, capture: {n: {llm: output_tokens}}}\n" +
		"  - {name: b, path: /v1/completions, llm: {model: x, input_tokens: 'normal:10,2', exact: true}}\n" +
		"flows: [{name: f, steps: [m, a, a, b]}]\nthresholds:\n  - {expr: p99_ttft < 1s, step: a}\n  - goodput > 50%\n  - output_tokens_per_sec > 1\n")
	f.Fuzz(func(t *testing.T, src string) {
		s, err := Parse("fuzz.yaml", []byte(src), LoadOptions{Env: func(string) (string, bool) { return "v", true }})
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.yaml:") {
				t.Fatalf("error without a position: %v", err)
			}
			return
		}
		// A loaded scenario builds requests without panicking.
		v := newVU(s, 0)
		for i := range 5 {
			if _, step, _, ok := v.Next(uint64(i)); ok {
				v.StreamTokens(3, 4) // what an llm step's stream would hand over
				v.Done(step, &http1.Parser{Status: 200})
			}
		}
	})
}

// A templated step's request is byte for byte what http1.AppendRequest
// writes for the same request.
func TestBuildMatchesAppendRequest(t *testing.T) {
	src := "base: http://127.0.0.1:8080\nrequests: 1\nkeepalive: false\nsteps:\n" +
		"  - {name: a, method: PUT, path: '/v/{{counter}}', headers: {X-A: '{{counter}}', User-Agent: t}, body: 'n={{counter}}'}\n" +
		"  - {name: b, method: POST, path: '/e?{{counter}}'}\n"
	s, err := parse(t, src)
	if err != nil {
		t.Fatal(err)
	}
	v := newVU(s, 0)
	got, _ := v.build(0)
	want := http1.AppendRequest(nil, &http1.RequestSpec{Method: "PUT", Target: "/v/1", Host: "127.0.0.1:8080",
		Header: [][2]string{{"X-A", "2"}, {"User-Agent", "t"}}, Body: []byte("n=3"), Close: true})
	if string(got) != string(want) {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
	got, _ = v.build(1)
	want = http1.AppendRequest(nil, &http1.RequestSpec{Method: "POST", Target: "/e?4", Host: "127.0.0.1:8080",
		Header: [][2]string{{"User-Agent", "hail/" + plan.Version}}, Close: true})
	if string(got) != string(want) {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

// FuzzBodyJSON: whatever a body_json value is, once it loads, every body
// it makes is valid JSON.
func FuzzBodyJSON(f *testing.F) {
	for _, seed := range []string{"{a: 1}", "[1, 'x', {b: null}]", "{n: '{{int 1 9}}', s: 'a\"{{choice x \\\" y}}', u: '{{uuid}}'}",
		"{v: '{{var.v}}', r: '{{regex \"[\\\\x00-\\\\x1f]{3}\"}}'}", "'{{counter}}'", "{t: !!str '{{int 1 2}}', f: 1.5e3, i: 0x1f}"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, value string) {
		if strings.ContainsAny(value, "\n\r") {
			return
		}
		src := "base: http://h:1\nrequests: 1\nvariables: {v: 'q\"1'}\nsteps:\n  - name: a\n    method: POST\n    path: /\n    body_json: " + value + "\n"
		s, err := Parse("fuzz.yaml", []byte(src), LoadOptions{})
		if err != nil {
			return
		}
		v := newVU(s, 0)
		for i := range 5 {
			req, _, _, ok := v.Next(uint64(i))
			if !ok {
				continue
			}
			_, body, _ := strings.Cut(string(req), "\r\n\r\n")
			if !json.Valid([]byte(body)) {
				t.Fatalf("body_json %s made %q", value, body)
			}
		}
	})
}
