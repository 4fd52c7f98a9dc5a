package stats

import "testing"

// Two reads give one non-empty id (Linux).
func TestMachine(t *testing.T) {
	a, b := Machine(), Machine()
	if a == "" || a != b || MachineCPUs() < 1 {
		t.Errorf("machine %q %q, cpus %d", a, b, MachineCPUs())
	}
}
