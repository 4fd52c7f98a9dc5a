package scenario

import (
	"testing"

	"github.com/hail-loadgen/hail/internal/http1"
)

// The per-request cost of the vm-lifecycle mix in the builder alone: pick a
// step, build its request, capture from a 201's body.
func BenchmarkVMLifecycleBuilder(b *testing.B) {
	s, err := Load("../../examples/vm-lifecycle.yaml", LoadOptions{Base: "http://127.0.0.1:8080"})
	if err != nil {
		b.Fatal(err)
	}
	v := newVU(s, 0)
	p := &http1.Parser{Status: 201, Body: []byte(`{"id":"0123456789abcdef"}`)}
	b.ReportAllocs()
	for b.Loop() {
		_, st, _, ok := v.Next(0)
		if ok {
			v.Done(st, p)
		}
	}
}
