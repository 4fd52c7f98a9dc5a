package template

import (
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hail-loadgen/hail/internal/random"
)

func testEnv() *Env {
	refs, lasts := []PoolRef{}, []int{}
	return &Env{
		Vars:      map[string]Value{"tenant": {Text: "acme"}, "zone": {Text: "eu-1"}, "regions": {List: []string{"eu", "us", "ap"}}},
		LookupEnv: func(k string) (string, bool) { v, ok := map[string]string{"HAIL_TOKEN": "s3cret"}[k]; return v, ok },
		Counters:  map[string]*atomic.Uint64{}, MaxRepeat: random.DefaultMaxRepeat,
		Pools: map[string]int{"vms": 0}, Captures: map[string]int{"token": 0},
		Refs: &refs, Lasts: &lasts, Where: "a test",
	}
}

func expand(t *testing.T, src string, env *Env, c *Ctx) string {
	t.Helper()
	tm, err := Compile(src, env, Raw)
	if err != nil {
		t.Fatalf("%q: %v", src, err)
	}
	return string(tm.AppendTo(nil, c))
}

// Templates produce the values they promise.
func TestTemplateValues(t *testing.T) {
	env := testEnv()
	c := &Ctx{Rand: random.New(1), Hit: 41, Slots: []string{"id-7"}, Last: [][]byte{[]byte("tok")}}
	// Variables and environment variables are folded into literal bytes.
	tm, err := Compile(`{"t":"{{var.tenant}}","z":"{{ var.zone }}","k":"{{env.HAIL_TOKEN}}"}`, env, Raw)
	if err != nil {
		t.Fatal(err)
	}
	if !tm.Static() || string(tm.Literal()) != `{"t":"acme","z":"eu-1","k":"s3cret"}` {
		t.Errorf("variables: static %v, %q", tm.Static(), tm.Literal())
	}
	// Counters count from 1, shared by name; {{request}} is the request number.
	cnt, _ := Compile("vm-{{counter}}/{{counter other}}/{{request}}", env, Raw)
	for i := 1; i <= 3; i++ {
		if got, want := string(cnt.AppendTo(nil, c)), "vm-"+strconv.Itoa(i)+"/"+strconv.Itoa(i)+"/41"; got != want {
			t.Errorf("counter: %q, want %q", got, want)
		}
	}
	if got := expand(t, "{{counter}}", env, c); got != "4" {
		t.Errorf("the default counter is shared between templates: got %q, want 4", got)
	}
	// Random integers stay in range and cover it.
	seen := map[int]bool{}
	for range 2000 {
		n, err := strconv.Atoi(expand(t, "{{int -3 3}}", env, c))
		if err != nil || n < -3 || n > 3 {
			t.Fatalf("int -3 3 gave %d (%v)", n, err)
		}
		seen[n] = true
	}
	if len(seen) != 7 {
		t.Errorf("int -3 3 covered %d of 7 values", len(seen))
	}
	// UUIDs are version 4, variant 10, and differ.
	uuidRE := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	u1, u2 := expand(t, "{{uuid}}", env, c), expand(t, "{{uuid}}", env, c)
	if !uuidRE.MatchString(u1) || u1 == u2 {
		t.Errorf("uuid: %q, %q", u1, u2)
	}
	// Choices come from the list (words, quoted strings, or a list variable).
	for range 100 {
		if v := expand(t, `{{choice a "b c" d}}`, env, c); v != "a" && v != "b c" && v != "d" {
			t.Fatalf("choice gave %q", v)
		}
		if v := expand(t, `{{choice var.regions}}`, env, c); v != "eu" && v != "us" && v != "ap" {
			t.Fatalf("choice var.regions gave %q", v)
		}
	}
	// Regex strings match their pattern.
	re := regexp.MustCompile(`^[a-z]{3}-[0-9]{2,4}$`)
	for range 200 {
		if v := expand(t, `{{regex "[a-z]{3}-[0-9]{2,4}"}}`, env, c); !re.MatchString(v) {
			t.Fatalf("regex gave %q", v)
		}
	}
	// Pool values and the virtual user's last capture.
	if got := expand(t, "/items/{{pick vms}}?t={{last token}}", env, c); got != "/items/id-7?t=tok" {
		t.Errorf("pool/last: %q", got)
	}
	if got := expand(t, `a{{"{{"}}b{{'}}'}}`, env, c); got != "a{{b}}" {
		t.Errorf("quoted literals: %q", got)
	}
}

// Generated values are made safe where they land: percent-encoded in a
// request target, control bytes blanked in a header.
func TestTemplateEscaping(t *testing.T) {
	env := testEnv()
	c := &Ctx{Rand: random.New(1), Slots: []string{"a b\r\n%é"}}
	tm, _ := Compile("/x/{{pick vms}}", env, Target)
	if got := string(tm.AppendTo(nil, c)); got != "/x/a%20b%0D%0A%%C3%A9" {
		t.Errorf("target: %q", got)
	}
	tm, _ = Compile("v={{pick vms}}", testEnv(), Header)
	if got := string(tm.AppendTo(nil, c)); got != "v=a b  %é" {
		t.Errorf("header: %q", got)
	}
}

// Expanding a body with two variables (and a counter and a random int)
// costs no allocation once the buffer has grown.
func TestTemplateAllocs(t *testing.T) {
	env := testEnv()
	tm, err := Compile(`{"name":"vm-{{counter}}","tenant":"{{var.tenant}}","zone":"{{var.zone}}","cpus":{{int 1 8}},"id":"{{pick vms}}"}`, env, Raw)
	if err != nil {
		t.Fatal(err)
	}
	c := &Ctx{Rand: random.New(1), Slots: []string{"0123456789abcdef"}}
	buf := make([]byte, 0, 256)
	allocs := testing.AllocsPerRun(1000, func() { buf = tm.AppendTo(buf[:0], c) })
	if allocs > 1 {
		t.Errorf("%.1f allocations per expansion, want ≤ 1", allocs)
	}
	t.Logf("%.1f allocations per expansion: %s", allocs, buf)
}

func BenchmarkTemplateBody(b *testing.B) {
	env := testEnv()
	tm, _ := Compile(`{"name":"vm-{{counter}}","tenant":"{{var.tenant}}","zone":"{{var.zone}}","cpus":{{int 1 8}}}`, env, Raw)
	c := &Ctx{Rand: random.New(1)}
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf = tm.AppendTo(buf[:0], c)
	}
}

func TestTemplateErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"{{var.nope}}", `undefined variable "nope"`},
		{"{{env.HAIL_NOPE}}", "environment variable HAIL_NOPE is not set"},
		{"{{pick vmz}}", `undefined pool "vmz"`},
		{"{{last tokn}}", `undefined capture "tokn"`},
		{"{{int 5 1}}", "MIN ≤ MAX"},
		{"{{int a b}}", "two whole numbers"},
		{"x {{counter", `unclosed "{{"`},
		{"x }} y", `without an opening "{{"`},
		{"{{frob}}", `unknown expression "frob"`},
		{"{{tenant}}", "did you mean {{var.tenant}}"},
		{"{{var.regions}}", "is a list"},
		{`{{regex "a("}}`, "bad regex"},
		{`{{regex "a}}`, "unterminated quoted string"},
		{"{{}}", "empty {{ }}"},
	} {
		_, err := Compile(tc.src, testEnv(), Raw)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want it to mention %q", tc.src, err, tc.want)
		}
	}
}
