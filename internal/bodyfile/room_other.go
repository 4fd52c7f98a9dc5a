//go:build !linux

package bodyfile

// memoryRoom is unknown outside Linux: only the size limit applies.
func memoryRoom() (int64, bool) { return 0, false }
