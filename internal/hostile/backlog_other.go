//go:build !linux

package hostile

import "net"

func listenBacklog1() (net.Listener, error) { return net.Listen("tcp", "127.0.0.1:0") }
