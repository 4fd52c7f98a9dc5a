package runner

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/hail-loadgen/hail/internal/random"
	"github.com/hail-loadgen/hail/internal/scenario"
	"github.com/hail-loadgen/hail/internal/serve/servetest"
)

// body_json sends valid JSON with the right types: numbers from templates
// that yield numbers, strings JSON-escaped, Content-Type set. hail serve
// parses every body (400 for invalid JSON) and hands it back by id.
func TestBodyJSON(t *testing.T) {
	t.Parallel()
	const src = `
base: http://unused:1
connections: 2
requests: 40
variables: {tenant: 'acme "west"', cpus: 4}
steps:
  - name: create
    method: POST
    path: /items
    body_json:
      name: 'vm-{{counter}}'
      tenant: '{{var.tenant}}'
      cpus: '{{var.cpus}}'
      mem: '{{choice 512 1024}}'
      disk: '{{int 10 20}}'
      tag: '{{regex "[a-z]\"[a-z]"}}'
      label: !!str '{{int 1 9}}'
      id: '{{uuid}}'
      on: true
      none: null
      ratio: 0.5
      list: [1, 'two', {three: 3}]
    capture: {vms: {json: id}}
    expect: {status: 201}
  - name: get
    path: '/items/{{pick vms}}'
    expect: {status: 200, json: {data.cpus: 4, data.tenant: 'acme "west"', data.list.2.three: 3, data.none: null}}
`
	for _, eng := range engines(t) {
		t.Run(eng, func(t *testing.T) {
			t.Parallel()
			base, srv := servetest.Start(t)
			res, s := runFile(t, src, base, func(s *scenario.Scenario) { s.Settings.Engine = eng }, nil)
			create, get := step(t, res, "create"), step(t, res, "get")
			if create.StatusCodeDistribution["201"] != create.Counts.Requests || get.Counts.Failed != 0 || get.Counts.Requests == 0 {
				t.Fatalf("create %v %v, get %v %v: every body must parse and read back", create.StatusCodeDistribution, create.ErrorDistribution,
					get.StatusCodeDistribution, get.ErrorDistribution)
			}
			if it := srv.Stats().Items; it.Created != uint64(create.Counts.Requests) {
				t.Fatalf("server created %d", it.Created)
			}
			id, ok := s.Pools[0].Pick(random.New(1))
			if !ok {
				t.Fatal("no id captured")
			}
			resp, err := http.Get(base + "/items/" + id)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var item struct {
				Data map[string]any `json:"data"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&item); err != nil {
				t.Fatal(err)
			}
			d := item.Data
			for key, want := range map[string]string{"name": "string", "tenant": "string", "cpus": "number", "mem": "number", "disk": "number",
				"tag": "string", "label": "string", "id": "string", "on": "bool", "ratio": "number", "list": "list"} {
				got := "other"
				switch d[key].(type) {
				case string:
					got = "string"
				case float64:
					got = "number"
				case bool:
					got = "bool"
				case []any:
					got = "list"
				}
				if got != want {
					t.Errorf("%s = %#v: a %s, want a %s", key, d[key], got, want)
				}
			}
			if d["tenant"] != `acme "west"` || d["cpus"] != 4.0 || !strings.HasPrefix(d["name"].(string), "vm-") || d["none"] != nil {
				t.Errorf("stored item %v", d)
			}
			if tag, _ := d["tag"].(string); len(tag) != 3 || tag[1] != '"' {
				t.Errorf("tag %q: a generated quote must arrive escaped and intact", tag)
			}
		})
	}
}
