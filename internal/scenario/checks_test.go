package scenario

import (
	"strings"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/http1"
)

// A think time is refused in the open model, with the reason.
func TestThinkOpenModel(t *testing.T) {
	_, err := Parse("t.yaml", []byte("base: http://127.0.0.1:1\nrate: 10\nduration: 1s\nthink: 10ms\nsteps: [{name: a, path: /}]\n"), LoadOptions{})
	if err == nil || !strings.Contains(err.Error(), "t.yaml:4:8: think:") || !strings.Contains(err.Error(), "closed model") {
		t.Errorf("rate + think: %v", err)
	}
	s := mustParse(t, "base: http://127.0.0.1:1\nduration: 1s\nsteps: [{name: a, path: /, think: 10ms..20ms}]\n")
	s.Settings.Rate = 100 // -q
	if _, err := s.Plan(s.Settings.Schedule()); err == nil || !strings.Contains(err.Error(), "t.yaml:3:") {
		t.Errorf("-q with a step's think: %v", err)
	}
}

// Building a body_json request with feeds and judging its response with
// every kind of check allocates nothing once the buffers have grown.
func TestChecksAndBodyJSONAllocs(t *testing.T) {
	src := `
base: http://127.0.0.1:1
requests: 1
feeds: {users: {file: testdata/users.csv}}
steps:
  - name: a
    method: POST
    path: '/u/{{feed.users.id}}'
    body_json: {email: '{{feed.users.name}}', n: '{{int 1 9}}', tag: 'a"{{uuid}}'}
    think: 1ms..2ms
    expect: {status: [200, 201], body_contains: id, json: {id: x1, n: 3}, header: {X-Id: x1}}
`
	s := mustParse(t, src)
	v := newVU(s, 0)
	p := &http1.Parser{Status: 201, Body: []byte(`{"id":"x1","n":3.0}`), WantHeaders: []string{"x-id"}, HeaderValues: [][]byte{[]byte("x1")}}
	allocs := testing.AllocsPerRun(1000, func() {
		_, st, _, ok := v.Next(0)
		if !ok {
			t.Fatal("not built")
		}
		if verdict := v.Done(st, p); verdict.Failed || verdict.Think < time.Millisecond {
			t.Fatalf("verdict %+v", verdict)
		}
	})
	if allocs > 0 {
		t.Errorf("%.1f allocations per request, want 0", allocs)
	}
}
