package h3engine_test

import (
	"context"
	"crypto/tls"
	"net"

	"github.com/quic-go/quic-go"
)

// quicListener accepts QUIC connections (and drops them) for a protocol
// other than h3.
type quicListener struct {
	ln *quic.Listener
	pc net.PacketConn
}

func listenQUIC(conf *tls.Config) (*quicListener, error) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	ln, err := quic.Listen(pc, conf, nil)
	if err != nil {
		pc.Close()
		return nil, err
	}
	go func() {
		for {
			c, err := ln.Accept(context.Background())
			if err != nil {
				return
			}
			c.CloseWithError(0, "")
		}
	}()
	return &quicListener{ln: ln, pc: pc}, nil
}

func (l *quicListener) Addr() net.Addr { return l.pc.LocalAddr() }
func (l *quicListener) Close()         { l.ln.Close(); l.pc.Close() }
