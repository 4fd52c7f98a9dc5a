package scenario

import (
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// listFile is a scenario whose one step holds an n-item list: a body_json
// list of numbers, or (grpc) a client stream of n messages.
func listFile(n int, grpc bool) string {
	var b strings.Builder
	if grpc {
		b.WriteString(grpcHead + "steps:\n  - name: a\n    grpc:\n      call: hail.v1.Target/Collect\n      data:\n")
		for i := range n {
			b.WriteString("        - {payload: p" + strconv.Itoa(i) + "}\n")
		}
		return b.String()
	}
	b.WriteString("base: http://127.0.0.1:1\nrequests: 1\nsteps:\n  - name: a\n    method: POST\n    path: /\n    body_json:\n      items:\n")
	for i := range n {
		b.WriteString("        - " + strconv.Itoa(i) + "\n")
	}
	return b.String()
}

// loadCost parses src and returns the bytes it allocated and the time it
// took.
func loadCost(t *testing.T, src string) (uint64, time.Duration) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	if _, err := Parse("big.yaml", []byte(src), LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, took
}

// Loading is linear in the file: a body_json or gRPC data list of 40,000
// items (a file of a few hundred KB) took 8 s and 60 s, copying the body
// built so far for every item. The allocated bytes are the deterministic
// measure (a quadratic load allocates 16× for 4× the items, a linear one
// 4×, measured here with 2,500 and 10,000 items: a quadratic load's copies
// outweigh the rest already at 2,500); the time bound only catches a hang.
//
// Not parallel: the runtime's allocation count is the whole process's.
func TestLoadIsLinear(t *testing.T) {
	for _, grpc := range []bool{false, true} {
		name := map[bool]string{false: "body_json", true: "grpc-data"}[grpc]
		t.Run(name, func(t *testing.T) {
			small, big := listFile(2_500, grpc), listFile(10_000, grpc)
			loadCost(t, small) // warm: the proto file compiles once per loader, the runtime's first allocations
			a1, _ := loadCost(t, small)
			a4, took := loadCost(t, big)
			t.Logf("%s: %d KB file: %v, %d MB allocated (2,500 items: %d MB)", name, len(big)>>10, took, a4>>20, a1>>20)
			if ratio := float64(a4) / float64(a1); ratio > 6 {
				t.Errorf("4× the items allocated %.1f× the bytes (%d → %d): loading is not linear", ratio, a1, a4)
			}
			if limit := uint64(256 * len(big)); a4 > limit {
				t.Errorf("a %d-byte file allocated %d bytes to load (over %d)", len(big), a4, limit)
			}
			if took > 10*time.Second {
				t.Errorf("loading took %v", took)
			}
		})
	}
}

// An alias bomb (ten aliases of ten aliases of … a list) is refused at
// once with one line at the alias that passed the budget; aliases that
// repeat a modest part of the file still load.
func TestAliasBomb(t *testing.T) {
	t.Parallel()
	level := func(name, of string) string {
		return "      " + name + ": &" + name + " [" + strings.Repeat("*"+of+",", 9) + "*" + of + "]\n"
	}
	bomb := "base: http://127.0.0.1:1\nrequests: 1\nvariables:\n  x: &a [1,2,3,4,5,6,7,8,9,10]\nsteps:\n  - name: a\n    method: POST\n    path: /\n    body_json:\n" +
		level("b", "a") + level("c", "b") + level("d", "c") + level("e", "d") + level("f", "e") + level("g", "f")
	start := time.Now()
	_, err := Parse("bomb.yaml", []byte(bomb), LoadOptions{})
	if err == nil || !strings.HasPrefix(err.Error(), "bomb.yaml:14:") || !strings.Contains(err.Error(), "YAML aliases expand the file to more than 250000 values") {
		t.Fatalf("alias bomb: %v", err)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("more than one line: %q", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("refusing took %v", took)
	}
	// Three levels (1,000 values) and a header mapping aliased in every step load.
	ok := "base: http://127.0.0.1:1\nrequests: 1\nvariables:\n  x: &a [1,2,3,4,5,6,7,8,9,10]\n" +
		"steps:\n  - name: a\n    method: POST\n    path: /\n    headers: &h {X-A: '1', X-B: '2'}\n    body_json:\n" +
		level("b", "a") + level("c", "b") +
		"  - {name: b, path: /, headers: *h}\n  - {name: c, path: /, headers: *h}\n"
	s, err := Parse("ok.yaml", []byte(ok), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := newVU(s, 0).build(0)
	if n := strings.Count(string(req), ","); n < 999 {
		t.Errorf("the aliased body has %d commas, want ≥ 999", n)
	}
}
