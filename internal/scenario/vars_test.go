package scenario

import (
	"strings"
	"testing"
)

// Variables may build on each other; one that refers to itself, directly
// or in a cycle, is refused at FILE:LINE:COL (it was sent literally).
func TestVariableReferences(t *testing.T) {
	const steps = "steps:\n  - name: get\n    path: /{{var.a}}\n"
	s, err := Parse("t.yaml", []byte("base: http://127.0.0.1:8080\nrequests: 1\nvariables:\n  a: '{{var.b}}-{{var.c}}'\n  b: 'x{{var.c}}'\n  c: '{{env.HAIL_T}}'\n  l: ['{{var.c}}', plain]\n"+steps),
		LoadOptions{Env: func(k string) (string, bool) { return "E", k == "HAIL_T" }})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := newVU(s, 0).build(0)
	if !strings.HasPrefix(string(got), "GET /xE-E HTTP/1.1\r\n") {
		t.Errorf("request %q, want GET /xE-E", got)
	}
	if l := s.Steps[0]; l.Name != "get" {
		t.Fatal(l.Name)
	}
	// --var replaces a variable literally, and the ones using it follow.
	s, err = Parse("t.yaml", []byte("base: http://127.0.0.1:8080\nrequests: 1\nvariables:\n  a: '{{var.b}}!'\n  b: '{{var.a}}'\n"+steps),
		LoadOptions{Vars: map[string]string{"b": "{{var.a}}"}, Env: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := newVU(s, 0).build(0); !strings.HasPrefix(string(got), "GET /{{var.a}}! ") {
		t.Errorf("request %q", got)
	}

	const head = "base: http://127.0.0.1:8080\nrequests: 1\n"
	for _, tc := range []struct{ name, vars, want string }{
		{"self", "variables:\n  a: 'x{{var.a}}'\n", `t.yaml:4:8: variables.a: {{var.a}} refers to a itself`},
		{"cycle", "variables:\n  a: '{{var.b}}'\n  b: '-{{ var.c }}'\n  c: '{{var.a}}'\n",
			`t.yaml:6:7: variables.c: {{var.a}} closes a cycle (a → b → c → a)`},
		{"cycle in flow style", "variables: {a: '{{var.b}}', b: '{{var.a}}'}\n", `t.yaml:3:33: variables.b: {{var.a}} closes a cycle (a → b → a)`},
		{"block scalar", "variables:\n  a: |\n    line\n    {{var.a}}\n", `t.yaml:6:5: variables.a: {{var.a}} refers to a itself`},
		{"per request", "variables:\n  a: 'id-{{uuid}}'\n", `t.yaml:4:10: variables.a: {{uuid}} changes with every request`},
		{"undefined", "variables:\n  a: '{{var.zz}}'\n", `t.yaml:4:7: variables.a: undefined variable "zz"`},
	} {
		_, err := parse(t, head+tc.vars+steps)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: %v\nwant %s…", tc.name, err, tc.want)
		}
	}
}
