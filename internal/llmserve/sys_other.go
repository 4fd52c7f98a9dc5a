//go:build !unix

package llmserve

// sysConn without Unix sockets: every write goes through the connection's
// goroutine, and a client that leaves while queued is found at its first
// write.
type sysConn struct{}

func (sysConn) init(*conn) {}

func (sysConn) tryWrite([]byte) (int, error) { return 0, nil }

func (sysConn) peerGone() bool { return false }
