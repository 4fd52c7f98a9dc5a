//go:build !linux

package transport

import (
	"io"
	"net"
)

// RxReader reads with the kernel's receive times on Linux; elsewhere
// reads are stamped by hail's clock.
type RxReader struct {
	// Rx is always 0 here.
	Rx int64
}

// Attach reports false: receive times are Linux's.
func (r *RxReader) Attach(net.Conn) bool { return false }

// Read is never called: Attach said no.
func (r *RxReader) Read([]byte) (int, error) { return 0, io.EOF }

// stamp leaves c as it is: receive times are Linux's.
func stamp(c *net.TCPConn) net.Conn { return c }

// RxTime is 0: receive times are Linux's.
func RxTime(net.Conn) int64 { return 0 }
