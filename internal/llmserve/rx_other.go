//go:build !linux

package llmserve

import "net"

// rxState is empty where the kernel's receive times are not read.
type rxState struct{}

func (c *conn) enableRxTime() bool { return false }

func (c *conn) readRx(p []byte) (int, error) { return c.nc.Read(p) }

func enableListenerRx(net.Listener) {}
