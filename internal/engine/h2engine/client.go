package h2engine

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/hail-loadgen/hail/internal/engine"
	sm "github.com/hail-loadgen/hail/internal/stream"
)

// client is hail's HTTP/2 client connection: lean where a load generator
// spends its time. A request is one pre-encoded HEADERS block (built once
// per request variant, using the static table and literals that the server
// does not index, so the block never depends on connection state) and, for
// a body, DATA frames within the flow-control windows; every stream's
// frames are queued on the batchConn and leave together. One reader
// goroutine decodes the server's frames (x/net's Framer and HPACK decoder)
// and completes each stream by a channel send to the goroutine waiting for
// it. No goroutine, http.Request or http.Response is made per request.
type client struct {
	nc     *batchConn
	fr     *http2.Framer
	since  func() time.Duration
	rxBase int64 // the job's start, Unix ns: turns receive times (transport.RxTime) into its clock
	sent   bool  // a client certificate was configured (for Cause)

	mu          sync.Mutex
	cond        *sync.Cond // a stream slot or send window opened, or the connection failed
	nextID      uint32
	streams     map[uint32]*call
	active      uint32
	maxStreams  uint32 // the server's SETTINGS_MAX_CONCURRENT_STREAMS
	maxFrame    uint32 // the server's SETTINGS_MAX_FRAME_SIZE
	initWin     int64  // the server's SETTINGS_INITIAL_WINDOW_SIZE: our send window per new stream
	connWin     int64  // our send window on the connection
	recvUnacked int64  // DATA bytes received on the connection since our last WINDOW_UPDATE
	goaway      bool   // no new streams (the server's GOAWAY, or Shutdown)
	away        bool   // the server sent GOAWAY
	lastID      uint32 // the server's GOAWAY last stream ID
	err         error  // the connection is dead
	drained     chan struct{}
	wbuf        []byte
	hbuf        []byte // a header block made for one request (a body of its own length)

	br       *bufio.Reader // what the framer reads from
	preface  chan struct{} // closed once the server's first frame is read, or the reader ended
	notH2    *NotH2CError  // the server's first bytes were not a SETTINGS frame (set before preface closes)
	settings *time.Timer   // fails the connection when the server's SETTINGS do not come in time (nil: no limit)
	slow     *SettingsTimeoutError

	// the header block being decoded (reader goroutine only)
	dec     *hpack.Decoder
	hStream uint32 // its stream
	hEnd    bool   // it ends the stream
	hStatus int
	hGRPC   int  // grpc-status; -1 when the block has none
	hIsGRPC bool // content-type application/grpc (or application/grpc+…)
	hEnc    bool // a grpc-encoding other than identity
	hLoc    []byte
	hEvents bool // content-type: text/event-stream
	hBytes  int  // the block's encoded bytes so far
	hSize   int  // its decoded size so far (RFC 9113 §6.5.2: name + value + 32 per field)

	maxHeaderList int // the header list size hail announced: a larger block fails the connection
}

// call is one request in flight; each stream slot reuses its own.
type call struct {
	id         uint32
	done       chan struct{} // one token when the call ends
	p          *httpResult
	sendWin    int64
	recvUnack  int64
	gotHeaders bool
	wrote      bool // the request's HEADERS were handed to the connection's writer
	err        error
	idle       *time.Timer // a stream's idle timeout (waitIdle), reused
}

// httpResult is where the reader puts a response: the stream's parser
// fields, filled as the HTTP/1 parser would.
type httpResult struct {
	status   *int
	body     *int64
	capture  *[]byte
	limit    int
	location *[]byte
	wantLoc  bool
	fb       time.Duration
	grpc     *grpcResult // a gRPC call's messages and status (grpc.go); nil for HTTP
	// meter measures the response if it is a stream (nil: streams are not
	// measured); streaming is set once its head said it is one. The reader
	// feeds it DATA frames, stamped with the time they were read.
	meter     *sm.Meter
	head      bool // the request is HEAD: its response has no body
	streaming bool
}

// Our receive windows: large, so that small responses never wait for a
// WINDOW_UPDATE; replenished when half is used.
const (
	streamWindow = 4 << 20
	connWindow   = 1 << 30
)

var clientPreface = []byte(http2.ClientPreface)

// newClient starts HTTP/2 on nc: the preface, our SETTINGS and connection
// window, and the reader goroutine. A server whose SETTINGS (its preface)
// have not arrived within settingsWithin (> 0; what is left of the connect
// timeout, connectTimeout) fails the connection with a *SettingsTimeoutError.
func newClient(nc *batchConn, maxHeaderBytes int, since func() time.Duration, settingsWithin, connectTimeout time.Duration) (*client, error) {
	c := &client{nc: nc, since: since, rxBase: time.Now().UnixNano() - int64(since()), nextID: 1, streams: map[uint32]*call{}, maxStreams: 100,
		maxFrame: 16384, initWin: 65535, connWin: 65535}
	c.cond = sync.NewCond(&c.mu)
	c.br = bufio.NewReaderSize(nc, 32<<10)
	c.preface = make(chan struct{})
	c.fr = http2.NewFramer(nil, c.br)
	// We advertise no SETTINGS_MAX_FRAME_SIZE, so the server may send at most the default 16 KiB:
	// a larger frame is refused before it is read into memory.
	c.fr.SetMaxReadFrameSize(16384)
	c.dec = hpack.NewDecoder(4096, c.onField)
	if maxHeaderBytes > 0 {
		c.dec.SetMaxStringLength(maxHeaderBytes)
	}
	b := append([]byte(nil), clientPreface...)
	b = appendFrameHeader(b, 18, http2.FrameSettings, 0, 0)
	b = appendSetting(b, http2.SettingEnablePush, 0)
	b = appendSetting(b, http2.SettingInitialWindowSize, streamWindow)
	c.maxHeaderList = max(maxHeaderBytes, 16<<10)
	b = appendSetting(b, http2.SettingMaxHeaderListSize, uint32(c.maxHeaderList))
	b = appendWindowUpdate(b, 0, connWindow-65535)
	if _, err := nc.Write(b); err != nil {
		return nil, err
	}
	if settingsWithin > 0 {
		c.settings = time.AfterFunc(settingsWithin, func() { c.settingsLate(connectTimeout) })
	}
	go c.readLoop()
	return c, nil
}

// SettingsTimeoutError is a connection whose server did not send its
// HTTP/2 SETTINGS (the server's preface) within the connect timeout: it
// accepted the connection and stayed silent, or sent them too slowly.
type SettingsTimeoutError struct{ After time.Duration }

func (e *SettingsTimeoutError) Error() string {
	return fmt.Sprintf("timed out after %v waiting for the server's HTTP/2 settings (--connect-timeout): it accepted the connection but did not answer the HTTP/2 preface", e.After)
}

// settingsLate fails the connection if the server's preface has not come.
func (c *client) settingsLate(after time.Duration) {
	select {
	case <-c.preface:
		return
	default:
	}
	c.mu.Lock()
	c.slow = &SettingsTimeoutError{After: after}
	c.failLocked(c.slow)
	c.mu.Unlock()
	c.nc.Close()
}

// GoAwayError is a request that a GOAWAY frame from the server turned away
// (its stream was above the last one the server would process), or that
// found its connection draining after one.
type GoAwayError struct {
	LastStreamID uint32
	Code         http2.ErrCode
	Debug        string
}

func (e *GoAwayError) Error() string {
	return fmt.Sprintf("http2: server sent GOAWAY (last stream %d, %v, %q)", e.LastStreamID, e.Code, e.Debug)
}

// errConnClosed is a request on a connection that was closed.
var errConnClosed = errors.New("http2: client connection closed")

// maxQueued bounds the request bytes a stream hands the connection's
// writer ahead of what it wrote: a large body (a server that opened a
// window of a GB) goes out in pieces of this size, so that its frames
// never make a copy of it.
const maxQueued = 512 << 10

// exchange sends tp with body (tp's own, or a shared one: SharedBody) and
// waits for its response, which the reader writes into r. ctx cancels the
// stream.
func (c *client) exchange(ctx context.Context, tp *template, body []byte, cl *call, r *httpResult) error {
	block := tp.h2Block()
	select { // a token left by a call that ended as it was cancelled
	case <-cl.done:
	default:
	}
	c.mu.Lock()
	var w waker // wakes the waits below when ctx ends; armed only when one has to wait
	defer w.stop()
	for c.err == nil && !c.goaway && c.active >= c.maxStreams {
		if err := ctx.Err(); err != nil {
			c.mu.Unlock()
			return err // no stream slot opened in time (the server's SETTINGS_MAX_CONCURRENT_STREAMS)
		}
		w.arm(ctx, c)
		c.cond.Wait()
	}
	if c.err != nil || c.goaway {
		// A connection the server sent GOAWAY on turns the request away
		// as that GOAWAY did, also once hail has closed it after its last
		// stream ended: a stream that got the connection just before then
		// was refused by the server, not by a failure of the connection.
		err := c.err
		if c.away || err == nil {
			err = &GoAwayError{LastStreamID: c.lastID, Code: http2.ErrCodeNo, Debug: "connection draining"}
		}
		c.mu.Unlock()
		return err
	}
	id := c.nextID
	c.nextID += 2
	if c.nextID >= 1<<31-1 { // stream IDs run out: the next request gets a new connection
		c.goaway = true
	}
	*cl = call{id: id, done: cl.done, p: r, sendWin: c.initWin, idle: cl.idle}
	c.streams[id] = cl
	c.active++
	if int64(len(body)) != tp.clen && !tp.grpc { // the block's content-length is the template's
		c.hbuf = tp.appendBlock(c.hbuf[:0], len(body))
		block = c.hbuf
	}
	c.wbuf = appendHeaders(c.wbuf[:0], id, block, len(body) == 0, int(c.maxFrame))
	for len(body) > 0 && c.err == nil && c.streams[id] == cl {
		if len(c.wbuf) >= maxQueued/2 { // a large body: hand it over in pieces
			c.write(cl)
			if c.nc.queued() > maxQueued { // the writer is behind: wait for it, not holding c.mu
				c.mu.Unlock()
				err := c.nc.drain(ctx, maxQueued/2)
				c.mu.Lock()
				if err != nil {
					c.resetLocked(cl)
					c.mu.Unlock()
					return err
				}
				continue
			}
		}
		n := min(int64(len(body)), int64(c.maxFrame), c.connWin, cl.sendWin)
		if n <= 0 {
			if len(c.wbuf) > 0 {
				c.write(cl)
			}
			if err := ctx.Err(); err != nil { // the send window stayed shut until the request's end
				c.resetLocked(cl)
				c.mu.Unlock()
				return err
			}
			w.arm(ctx, c)
			c.cond.Wait()
			continue
		}
		flags := http2.Flags(0)
		if int(n) == len(body) {
			flags = http2.FlagDataEndStream
		}
		c.wbuf = appendFrameHeader(c.wbuf, int(n), http2.FrameData, flags, id)
		c.wbuf = append(c.wbuf, body[:n]...)
		body = body[n:]
		c.connWin -= n
		cl.sendWin -= n
	}
	if len(c.wbuf) > 0 {
		c.write(cl)
	}
	c.mu.Unlock()
	if r.meter != nil && r.meter.Idle() > 0 {
		return c.waitIdle(ctx, cl, r.meter)
	}
	select {
	case <-cl.done:
		return cl.err
	case <-ctx.Done():
		c.cancel(cl)
		return ctx.Err()
	}
}

// waitIdle waits for cl as exchange does, and fails it with
// engine.ErrStreamIdle when its response is a stream that goes too long
// without an event (m.IdleAt). The timer is checked lazily: it fires once
// per idle period and is set again from the stream's latest event.
func (c *client) waitIdle(ctx context.Context, cl *call, m *sm.Meter) error {
	if cl.idle == nil {
		cl.idle = time.NewTimer(m.Idle())
	} else {
		cl.idle.Reset(m.Idle())
	}
	defer cl.idle.Stop()
	for {
		select {
		case <-cl.done:
			return cl.err
		case <-ctx.Done():
			c.cancel(cl)
			return ctx.Err()
		case <-cl.idle.C:
			now := c.since()
			switch at := m.IdleAt(); {
			case at == 0: // not a stream (yet)
				cl.idle.Reset(m.Idle())
			case now >= at:
				c.mu.Lock()
				if c.streams[cl.id] == cl { // else it ended as the timer fired
					c.resetLocked(cl)
					cl.err = engine.ErrStreamIdle
				}
				c.mu.Unlock()
				<-cl.done
				return cl.err
			default:
				cl.idle.Reset(at - now)
			}
		}
	}
}

// write hands c.wbuf, cl's frames, to the connection's writer; c.mu is held.
func (c *client) write(cl *call) {
	if _, err := c.nc.Write(c.wbuf); err == nil {
		cl.wrote = true
	}
	c.wbuf = c.wbuf[:0]
}

// cancel resets a stream whose request was given up.
func (c *client) cancel(cl *call) {
	c.mu.Lock()
	c.resetLocked(cl)
	c.mu.Unlock()
}

// resetLocked ends cl, if it is still open, and tells the server with RST_STREAM (CANCEL).
func (c *client) resetLocked(cl *call) {
	if c.streams[cl.id] != cl {
		return
	}
	c.finishLocked(cl, context.Canceled)
	var b [13]byte
	f := appendFrameHeader(b[:0], 4, http2.FrameRSTStream, 0, cl.id)
	f = binary.BigEndian.AppendUint32(f, uint32(http2.ErrCodeCancel))
	c.nc.Write(f)
}

// waker broadcasts c.cond when a request's context ends, so that a request waiting for a stream
// slot or a send window gives up at its timeout. Arming costs an allocation, so it happens
// only when a request has to wait, never on the usual path.
type waker struct{ stopFn func() bool }

func (w *waker) arm(ctx context.Context, c *client) {
	if w.stopFn == nil && ctx.Done() != nil {
		w.stopFn = context.AfterFunc(ctx, func() {
			c.mu.Lock()
			c.cond.Broadcast()
			c.mu.Unlock()
		})
	}
}

func (w *waker) stop() {
	if w.stopFn != nil {
		w.stopFn()
	}
}

// finishLocked ends cl with err (nil: its response is complete).
func (c *client) finishLocked(cl *call, err error) {
	delete(c.streams, cl.id)
	c.active--
	cl.err = err
	select {
	case cl.done <- struct{}{}:
	default:
	}
	c.cond.Broadcast()
	if c.goaway && c.active == 0 && c.drained != nil {
		close(c.drained)
		c.drained = nil
	}
}

// failLocked kills the connection: every stream ends with err.
func (c *client) failLocked(err error) {
	if c.err == nil {
		c.err = err
	}
	for _, cl := range c.streams {
		c.finishLocked(cl, err)
	}
	c.cond.Broadcast()
}

// WaitPreface waits until the server's first frame arrives (or ctx ends) and reports a server
// that does not speak HTTP/2 at all. The mux asks it of a run's first connection only, so that
// such a run ends with one clear error instead of a count of failed requests.
func (c *client) WaitPreface(ctx context.Context) error {
	if c.settings == nil { // no connect timeout bounds the wait: as long as one would by default
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
	}
	select {
	case <-c.preface:
	case <-ctx.Done():
		return nil // the run stopped first
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.notH2 != nil:
		return c.notH2
	case c.slow != nil:
		return c.slow
	}
	return nil
}

// Usable implements Conn.
func (c *client) Usable() bool {
	c.mu.Lock()
	ok := c.err == nil && !c.goaway
	c.mu.Unlock()
	return ok
}

// Bytes implements Conn.
func (c *client) Bytes() (int64, int64) { return c.nc.in.Load(), c.nc.out.Load() }

// Close implements Conn: in-flight streams fail.
func (c *client) Close() error {
	c.mu.Lock()
	c.failLocked(errConnClosed)
	c.mu.Unlock()
	return c.nc.Close()
}

// Shutdown stops new streams and waits for those in flight to end.
func (c *client) Shutdown(ctx context.Context) error {
	c.mu.Lock()
	c.goaway = true
	if c.active == 0 || c.err != nil {
		c.mu.Unlock()
		return nil
	}
	if c.drained == nil {
		c.drained = make(chan struct{})
	}
	ch := c.drained
	c.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Cause implements the cause of death lookup (see causeOf).
func (c *client) Cause() error { return certCause(c.nc.cause(), c.sent) }
