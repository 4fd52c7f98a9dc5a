package llmserve

import (
	"bufio"
	"io"
	"strconv"
	"sync"
)

// logHeader is the log's first line; the package documentation describes
// the columns.
const logHeader = "request,proto,endpoint,stream,arrival_ns,arrival_clock,admit_ns,first_token_ns,end_ns," +
	"prompt_tokens,max_tokens,output_tokens,tokens_sent,chunks_sent,status,fault,fault_at,outcome,cached_tokens\n"

// record is one request's log line, copied out of its stream.
type record struct {
	id                         uint64
	h2, stream, kernel         bool
	api                        apiKind
	arrival, admit, first, end int64 // Unix ns; 0: never
	prompt, max, out           int
	sent, chunks, status       int
	fault                      FaultKind
	faultAt                    int
	outcome                    outcome
	cached                     int
}

func (st *stream) record() record {
	s := st.s
	r := record{
		id: st.id, h2: st.c == nil, stream: st.req.stream, kernel: st.kernelRx, api: st.req.api,
		arrival: st.arrivalUnix, end: s.wallBase + int64(st.endAt),
		prompt: st.req.promptTokens, max: st.req.maxTokens, out: st.n,
		sent: st.sent, chunks: st.chunks, status: st.status, faultAt: st.faultAt, outcome: st.out, cached: st.req.cachedTokens,
	}
	if st.admitted {
		r.admit = s.wallBase + int64(st.admitAt)
	}
	if st.firstAt >= 0 {
		r.first = s.wallBase + int64(st.firstAt)
	}
	if st.fault != nil {
		r.fault = st.fault.Kind
	}
	if r.fault == faultNone || r.fault == Fault429 || r.fault == Fault503 {
		r.faultAt = 0
	}
	return r
}

// reqLog writes records from its own goroutine, so that a slow disk does
// not hold up the shards; a full queue (4096 records) makes them wait
// rather than lose a line.
type reqLog struct {
	mu     sync.RWMutex // closed, against an HTTP/2 handler still running at Close
	closed bool
	ch     chan record
	done   chan error
}

func newReqLog(w io.Writer) *reqLog {
	l := &reqLog{ch: make(chan record, 4096), done: make(chan error, 1)}
	go l.run(bufio.NewWriterSize(w, 64<<10))
	return l
}

// add queues a record; after close it is dropped (the server has stopped).
func (l *reqLog) add(r record) {
	l.mu.RLock()
	if !l.closed {
		l.ch <- r
	}
	l.mu.RUnlock()
}

// close writes what is queued, flushes and returns the first write error.
func (l *reqLog) close() error {
	l.mu.Lock()
	l.closed = true
	close(l.ch)
	l.mu.Unlock()
	return <-l.done
}

func (l *reqLog) run(w *bufio.Writer) {
	var err error
	_, err = w.WriteString(logHeader)
	line := make([]byte, 0, 256)
	for r := range l.ch {
		line = r.append(line[:0])
		if _, werr := w.Write(line); err == nil {
			err = werr
		}
		if len(l.ch) == 0 {
			if ferr := w.Flush(); err == nil {
				err = ferr
			}
		}
	}
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	l.done <- err
}

func (r *record) append(b []byte) []byte {
	b = strconv.AppendUint(b, r.id, 10)
	if r.h2 {
		b = append(b, ",h2,"...)
	} else {
		b = append(b, ",http1,"...)
	}
	b = append(b, apiNames[r.api]...)
	b = append(b, ',')
	b = strconv.AppendBool(b, r.stream)
	b = append(b, ',')
	b = strconv.AppendInt(b, r.arrival, 10)
	if r.kernel {
		b = append(b, ",kernel,"...)
	} else {
		b = append(b, ",server,"...)
	}
	for _, v := range [...]int64{r.admit, r.first, r.end, int64(r.prompt), int64(r.max), int64(r.out), int64(r.sent), int64(r.chunks), int64(r.status)} {
		b = strconv.AppendInt(b, v, 10)
		b = append(b, ',')
	}
	b = append(b, r.fault.String()...)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(r.faultAt), 10)
	b = append(b, ',')
	b = append(b, outcomeNames[r.outcome]...)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(r.cached), 10)
	return append(b, '\n')
}
