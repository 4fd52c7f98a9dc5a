package scenario

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/hail-loadgen/hail/internal/grpccall"
	"github.com/hail-loadgen/hail/internal/http1"
	"github.com/hail-loadgen/hail/internal/status"
)

// grpcStep is what a gRPC step adds to a step: the method, whose input
// message its data is encoded into, and whose output message its
// captures decode.
type grpcStep struct {
	method *grpccall.Method
	count  int               // stream_count: messages per client stream (0: the data's)
	enc    *grpccall.Encoder // the input message's encoding, prepared once
	dec    *grpccall.Decoder // the output message's JSON, prepared once
}

func newGRPCStep(m *grpccall.Method) *grpcStep {
	return &grpcStep{method: m, enc: grpccall.NewEncoder(m.Desc.Input()), dec: grpccall.NewDecoder(m.Desc.Output())}
}

// encode appends the request body for data (the data's JSON after
// expansion): unary and server-streaming calls send one message (an array
// gives one per call, by hit); client and bidi streaming send the array's
// messages (count of them, cycling, when count is set).
func (g *grpcStep) encode(dst, data []byte, hit uint64) ([]byte, error) {
	if !g.method.ClientStreams() && firstByte(data) == '{' {
		// One message: encoded in place behind its frame's prefix, by the
		// step's Encoder when it covers the data (grpccall.Encoder).
		at := len(dst)
		if out, ok := g.enc.Append(append(dst, 0, 0, 0, 0, 0), data); ok {
			binary.BigEndian.PutUint32(out[at+1:], uint32(len(out)-at-5))
			return out, nil
		}
	}
	msgs, err := grpccall.SplitData(data)
	if err != nil {
		return nil, err
	}
	in := g.method.Desc.Input()
	if !g.method.ClientStreams() {
		i := int(hit % uint64(len(msgs)))
		b, err := grpccall.Encode(in, msgs[i])
		if err != nil {
			return nil, indexed(err, i, len(msgs))
		}
		return grpccall.AppendFrame(dst, b), nil
	}
	n := g.count
	if n == 0 {
		n = len(msgs)
	}
	encoded := make([][]byte, len(msgs))
	for i, js := range msgs {
		if encoded[i], err = grpccall.Encode(in, js); err != nil {
			return nil, indexed(err, i, len(msgs))
		}
	}
	for i := range n {
		dst = grpccall.AppendFrame(dst, encoded[i%len(encoded)])
	}
	return dst, nil
}

func indexed(err error, i, n int) error {
	if n == 1 {
		return err
	}
	return fmt.Errorf("[%d] %v", i, err)
}

// captureBody puts into buf what a gRPC step's checks and captures read:
// its first response message as protojson (JSON names). It reports false
// when the response has no complete message or it does not decode.
func (g *grpcStep) captureBody(p *http1.Parser, buf *[]byte) bool {
	payload, ok := grpccall.FirstMessage(p.Body)
	if !ok {
		return false
	}
	if *buf, ok = g.dec.AppendJSON((*buf)[:0], payload); ok {
		return true
	}
	w := bytes.NewBuffer((*buf)[:0])
	err := grpccall.ToJSON(w, g.method.Desc.Output(), payload)
	*buf = w.Bytes()
	return err == nil
}

// firstByte is the first byte of b that is not JSON white space (0: none).
func firstByte(b []byte) byte {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return c
		}
	}
	return 0
}

// grpcYield is the yield reason of a call whose expanded data did not fit
// its message.
const grpcYield = "data did not fit the call's message after expansion"

// HasGRPC reports whether any step (of the load, setup or teardown) is a
// gRPC call: the whole run then speaks HTTP/2, the setup and teardown
// included, as they run on the load's plan.
func (s *Scenario) HasGRPC() bool { return s.anyGRPC }

// statusValue is a capture's value of a status: the HTTP code, or the
// gRPC status name.
func statusValue(dst []byte, slot int) []byte {
	return append(dst, status.Name(slot)...)
}
