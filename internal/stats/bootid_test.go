package stats

import "testing"

// Two reads give one non-empty id (Linux).
func TestBootID(t *testing.T) {
	a, b := BootID(), BootID()
	if a == "" || a != b || BootCPUs() < 1 {
		t.Errorf("machine %q %q, cpus %d", a, b, BootCPUs())
	}
}
