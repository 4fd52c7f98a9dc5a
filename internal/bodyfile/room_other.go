//go:build !linux

package bodyfile

// memoryLimits are unknown outside Linux: only the size limit applies.
func memoryLimits() []memLimit { return nil }
