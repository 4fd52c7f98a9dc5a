package h2engine

// The client's reader goroutine: the server's preface, then every frame the
// server sends, each type by its own handler.

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/hail-loadgen/hail/internal/http1"
	sm "github.com/hail-loadgen/hail/internal/stream"
	"github.com/hail-loadgen/hail/internal/transport"
)

// readLoop is the connection's reader goroutine. After the server's
// preface it reads frames until the connection fails; each frame is
// handled with c.mu held, and the control frames the handlers ask for
// (acks, window updates) are sent after c.mu is released.
func (c *client) readLoop() {
	var ctl []byte // control frames to send
	prefaceOpen := true
	endPreface := func() {
		if prefaceOpen {
			prefaceOpen = false
			if c.settings != nil {
				c.settings.Stop()
			}
			close(c.preface)
		}
	}
	defer endPreface()
	if !c.checkPreface() {
		return
	}
	run := 0 // the server's PING and SETTINGS frames since its last other frame
	for {
		f, err := c.fr.ReadFrame()
		endPreface()
		if err != nil {
			c.readFailed(err)
			return
		}
		ctl = ctl[:0]
		acks := 0 // the server's PING or SETTINGS this frame acknowledges
		if isControl(f) {
			acks = 1
			if run++; run > maxControlRun { // no real server sends these in such a row: a flood, read or not
				c.mu.Lock()
				c.failLocked(&FloodError{Run: run})
				c.mu.Unlock()
				c.nc.Close()
				return
			}
		} else {
			run = 0
		}
		c.mu.Lock()
		switch f := f.(type) {
		case *http2.HeadersFrame:
			c.hStream, c.hEnd, c.hStatus, c.hGRPC, c.hLoc, c.hEvents = f.StreamID, f.StreamEnded(), 0, -1, c.hLoc[:0], false
			c.hIsGRPC, c.hEnc, c.hBytes, c.hSize = false, false, 0, 0
			err = c.headerBlock(f.HeaderBlockFragment(), f.HeadersEnded())
		case *http2.ContinuationFrame:
			err = c.headerBlock(f.HeaderBlockFragment(), f.HeadersEnded())
		case *http2.DataFrame:
			ctl = c.onData(f, ctl)
		case *http2.RSTStreamFrame:
			c.onRSTStream(f)
		case *http2.SettingsFrame:
			ctl, err = c.onSettings(f, ctl)
		case *http2.WindowUpdateFrame:
			c.onWindowUpdate(f)
		case *http2.PingFrame:
			ctl = c.onPing(f, ctl)
		case *http2.GoAwayFrame:
			c.onGoAway(f)
		}
		if err != nil { // an undecodable or oversized header block, or an invalid setting, breaks the connection
			c.failLocked(connectionFailure(err))
			c.mu.Unlock()
			c.nc.Close()
			return
		}
		c.mu.Unlock()
		if len(ctl) > 0 && !c.nc.writeAcks(ctl, acks, maxUnsentAcks, floodPatience) {
			c.mu.Lock()
			c.failLocked(&FloodError{Unsent: maxUnsentAcks})
			c.mu.Unlock()
			c.nc.Close()
			return
		}
	}
}

// maxUnsentAcks bounds the acknowledgements of the server's PING and
// SETTINGS frames waiting to be written: a server that floods them and
// does not read the answers would otherwise grow hail's write queue
// without end (the "ping flood" and "settings flood" of CVE-2019-9512
// and -9515). x/net's server allows 10,000 queued control frames too.
// Past it the reader stops reading until the server has read half of
// them; a server that has not within floodPatience is flooding.
const maxUnsentAcks = 10_000

// maxControlRun bounds the PING and SETTINGS frames (not their acks) a
// server sends in a row, with no other frame between: a real server sends
// a few (its SETTINGS, a keep-alive or BDP ping between streams' frames),
// a flooding one thousands. Past it the connection fails at once, whether
// or not the server reads the acknowledgements: a server that does not may
// also stop being read by the kernel's TCP (its receive queue full of
// small segments), and then neither the unsent acknowledgements nor
// anything else would tell hail of the flood.
const maxControlRun = 10_000

// isControl reports whether f is a PING or SETTINGS frame that asks for an
// acknowledgement.
func isControl(f http2.Frame) bool {
	switch f := f.(type) {
	case *http2.PingFrame:
		return !f.IsAck()
	case *http2.SettingsFrame:
		return !f.IsAck()
	}
	return false
}

// floodPatience is how long the reader waits for a server to read half of
// maxUnsentAcks.
const floodPatience = 2 * time.Second

// FloodError is a connection whose server flooded it with PING or SETTINGS
// frames: more than maxControlRun in a row (Run), or faster than it read
// hail's acknowledgements (Unsent).
type FloodError struct {
	// Run is the PING and SETTINGS frames the server sent in a row, or 0.
	Run int
	// Unsent is the acknowledgements waiting to be written, or 0.
	Unsent int
}

func (e *FloodError) Error() string {
	if e.Run > 0 {
		return fmt.Sprintf("http2: the server sent %d PING or SETTINGS frames in a row, nothing else between: a control frame flood", e.Run)
	}
	return fmt.Sprintf("http2: the server sent PING or SETTINGS frames without reading the acknowledgements (over %d unsent): a control frame flood", e.Unsent)
}

// errHeaderBlockTooLarge is a response header block over the size hail
// announced (SETTINGS_MAX_HEADER_LIST_SIZE), encoded or decoded: endless
// CONTINUATION frames, or a block that HPACK expands past it.
var errHeaderBlockTooLarge = fmt.Errorf("http2: %w", http1.ErrHeaderTooLarge)

// connectionFailure is what the streams of a connection whose reader met
// err end with: an oversized header block as such (header block too
// large), an HTTP/2 connection error as itself, any other decoding error as
// a COMPRESSION_ERROR.
func connectionFailure(err error) error {
	var ce http2.ConnectionError
	switch {
	case errors.Is(err, http1.ErrHeaderTooLarge), errors.Is(err, hpack.ErrStringLength):
		return errHeaderBlockTooLarge
	case errors.As(err, &ce):
		return ce
	}
	return http2.ConnectionError(http2.ErrCodeCompression)
}

// checkPreface reports whether the server's first frame is a SETTINGS
// frame (RFC 9113 §3.4: the server's preface), or the connection ended
// before one arrived (the first read fails in readLoop). Anything else (an
// HTTP/1 status line, an HTML error page) is a server that does not speak
// HTTP/2: the connection fails with a NotH2CError.
func (c *client) checkPreface() bool {
	b, err := c.br.Peek(9)
	if err != nil || http2.FrameType(b[3]) == http2.FrameSettings && b[4]&byte(http2.FlagSettingsAck) == 0 {
		return true
	}
	first, _ := c.br.Peek(min(c.br.Buffered(), 24))
	c.notH2 = &NotH2CError{First: string(first)}
	c.mu.Lock()
	c.failLocked(c.notH2)
	c.mu.Unlock()
	c.nc.Close()
	return false
}

// readFailed ends every stream when reading a frame failed: with
// errConnClosed if the connection was closed (by Close, or after it
// failed), else with the read's error.
func (c *client) readFailed(err error) {
	c.mu.Lock()
	if errors.Is(err, errConnClosed) || c.err != nil {
		c.failLocked(errConnClosed)
	} else {
		c.failLocked(err)
	}
	c.mu.Unlock()
}

// onData takes a DATA frame: its bytes count and are captured for their
// stream, which it ends at END_STREAM, and the receive windows are
// replenished (WINDOW_UPDATEs appended to ctl) once half is used.
func (c *client) onData(f *http2.DataFrame, ctl []byte) []byte {
	n := int64(f.Header().Length)
	c.recvUnacked += n
	if c.recvUnacked >= connWindow/2 {
		ctl = appendWindowUpdate(ctl, 0, uint32(c.recvUnacked))
		c.recvUnacked = 0
	}
	cl := c.streams[f.StreamID]
	if cl == nil {
		return ctl
	}
	data := f.Data()
	*cl.p.body += int64(len(data))
	if cl.p.streaming && len(data) > 0 {
		c.stampData(cl.p.meter)
		cl.p.meter.StreamBody(data)
	}
	if g := cl.p.grpc; g != nil {
		g.feed(data, c.since)
	}
	if room := cl.p.limit - len(*cl.p.capture); room > 0 {
		*cl.p.capture = append(*cl.p.capture, data[:min(len(data), room)]...)
	}
	cl.recvUnack += n
	if f.StreamEnded() {
		c.finishLocked(cl, nil)
	} else if cl.recvUnack >= streamWindow/2 {
		ctl = appendWindowUpdate(ctl, cl.id, uint32(cl.recvUnack))
		cl.recvUnack = 0
	}
	return ctl
}

// onRSTStream ends the stream the server reset.
func (c *client) onRSTStream(f *http2.RSTStreamFrame) {
	if cl := c.streams[f.StreamID]; cl != nil {
		c.finishLocked(cl, http2.StreamError{StreamID: f.StreamID, Code: f.ErrCode, Cause: errors.New("reset by the server")})
	}
}

// onSettings applies the server's SETTINGS and appends their ack to ctl.
// An invalid setting (e.g. SETTINGS_MAX_FRAME_SIZE 0) is an error: the
// connection is unusable.
func (c *client) onSettings(f *http2.SettingsFrame, ctl []byte) ([]byte, error) {
	if f.IsAck() {
		return ctl, nil
	}
	err := f.ForeachSetting(func(s http2.Setting) error {
		if err := s.Valid(); err != nil {
			return err
		}
		switch s.ID {
		case http2.SettingMaxConcurrentStreams:
			c.maxStreams = s.Val
		case http2.SettingMaxFrameSize:
			c.maxFrame = s.Val
		case http2.SettingInitialWindowSize:
			delta := int64(s.Val) - c.initWin
			c.initWin = int64(s.Val)
			for _, cl := range c.streams {
				cl.sendWin += delta
			}
		}
		return nil
	})
	ctl = appendFrameHeader(ctl, 0, http2.FrameSettings, http2.FlagSettingsAck, 0)
	c.cond.Broadcast()
	return ctl, err
}

// onWindowUpdate opens a send window: the connection's or a stream's.
func (c *client) onWindowUpdate(f *http2.WindowUpdateFrame) {
	if f.StreamID == 0 {
		c.connWin += int64(f.Increment)
	} else if cl := c.streams[f.StreamID]; cl != nil {
		cl.sendWin += int64(f.Increment)
	}
	c.cond.Broadcast()
}

// onPing appends the answer to a PING to ctl.
func (c *client) onPing(f *http2.PingFrame, ctl []byte) []byte {
	if f.IsAck() {
		return ctl
	}
	ctl = appendFrameHeader(ctl, 8, http2.FramePing, http2.FlagPingAck, 0)
	return append(ctl, f.Data[:]...)
}

// onGoAway stops new streams and ends those the server will not process
// (above its last stream ID); a Shutdown waiting for none in flight ends
// when none is left.
func (c *client) onGoAway(f *http2.GoAwayFrame) {
	c.goaway, c.away, c.lastID = true, true, f.LastStreamID
	for id, cl := range c.streams {
		if id > f.LastStreamID {
			c.finishLocked(cl, &GoAwayError{LastStreamID: f.LastStreamID, Code: f.ErrCode, Debug: string(f.DebugData())})
		}
	}
	if c.active == 0 && c.drained != nil {
		close(c.drained)
		c.drained = nil
	}
	c.cond.Broadcast()
}

// headerBlock decodes a header block fragment; at the block's end the
// response head (or trailers) goes to its stream.
func (c *client) headerBlock(frag []byte, end bool) error {
	if c.hBytes += len(frag); c.hBytes > c.maxHeaderList {
		return errHeaderBlockTooLarge
	}
	if _, err := c.dec.Write(frag); err != nil {
		return err
	}
	if c.hSize > c.maxHeaderList {
		return errHeaderBlockTooLarge
	}
	if !end {
		return nil
	}
	if err := c.dec.Close(); err != nil {
		return err
	}
	if cl := c.streams[c.hStream]; cl != nil {
		c.onHeaders(cl)
	}
	return nil
}

// onField notes the fields of a response head that hail uses.
func (c *client) onField(f hpack.HeaderField) {
	c.hSize += int(f.Size())
	switch f.Name {
	case ":status":
		c.hStatus, _ = strconv.Atoi(f.Value)
	case "location":
		c.hLoc = append(c.hLoc[:0], f.Value...)
	case "grpc-status":
		c.hGRPC = parseGRPCStatus(f.Value)
	case "content-type":
		c.hIsGRPC = isGRPCContentType(f.Value)
		c.hEvents = http1.IsEventStream([]byte(f.Value))
	case "grpc-encoding":
		c.hEnc = f.Value != "identity"
	}
}

// onHeaders takes a decoded response head (or trailers) for cl.
func (c *client) onHeaders(cl *call) {
	if !cl.gotHeaders {
		status := c.hStatus
		if status < 100 || status > 999 {
			c.finishLocked(cl, http2.StreamError{StreamID: cl.id, Code: http2.ErrCodeProtocol, Cause: fmt.Errorf("bad :status %d", status)})
			return
		}
		if status < 200 { // interim
			return
		}
		cl.gotHeaders = true
		*cl.p.status = status
		if g := cl.p.grpc; g == nil { // a gRPC call's first byte is its first message (grpc.go)
			cl.p.fb = c.since()
		} else {
			g.framed, g.encoded = status == 200 && c.hIsGRPC, c.hEnc
		}
		if cl.p.wantLoc && len(c.hLoc) > 0 {
			*cl.p.location = append((*cl.p.location)[:0], c.hLoc...)
		}
		if m := cl.p.meter; m != nil && status < 300 && !cl.p.head && !c.hEnd && (c.hEvents || m.All()) {
			cl.p.streaming = true
			m.Time(c.since(), -1)
			m.StreamHead()
		}
	}
	if c.hEnd {
		if g := cl.p.grpc; g != nil && c.hGRPC >= 0 {
			g.status = c.hGRPC
		}
		c.finishLocked(cl, nil)
	}
}

// NotH2CError is a server whose first bytes were not HTTP/2's SETTINGS frame: it does not speak
// HTTP/2 (typically an HTTP/1 server answering the preface with an error).
type NotH2CError struct {
	First string // the server's first bytes (up to 24)
}

func (e *NotH2CError) Error() string {
	return fmt.Sprintf("the server did not answer the HTTP/2 preface with a SETTINGS frame (it began %q): it does not speak h2c "+
		"(HTTP/2 over plain TCP with prior knowledge); use an https:// URL for h2 by ALPN, or drop --http2", e.First)
}

// stampData stamps a stream's DATA frame for m: with the kernel's receive
// time of the last read from the connection where it gives one (the
// frame's bytes came with that read or an earlier one), else with now.
func (c *client) stampData(m *sm.Meter) {
	now := c.since()
	if c.rxBase != 0 {
		if rx := transport.RxTime(c.nc); rx > 0 {
			m.Time(min(time.Duration(rx-c.rxBase), now), now)
			return
		}
	}
	m.Time(now, -1)
}
