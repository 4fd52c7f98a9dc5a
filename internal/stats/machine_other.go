//go:build !linux

package stats

// MachineReader takes Machine readings (none outside Linux).
type MachineReader struct{}

// Read returns an empty reading.
func (r *MachineReader) Read() Machine { return Machine{} }

// Close does nothing.
func (r *MachineReader) Close() {}
