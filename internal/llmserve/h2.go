package llmserve

import (
	"io"
	"net/http"
	"strconv"
	"strings"
)

// h2Handler serves HTTP/2 (h2c with prior knowledge) through net/http's
// HTTP/2 server: the same endpoints and streams as HTTP/1.1, but each
// stream's bytes go through its handler's goroutine (the shard hands them
// over), since net/http owns the connection. That costs a goroutine
// wake-up per chunk, which the HTTP/1.1 path avoids.
type h2Handler struct{ s *Server }

func (h h2Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s := h.s
	rt := routeOf([]byte(r.URL.Path))
	if allow, ok := rt.allows(r.Method); !ok {
		w.Header().Set("Allow", allow)
		h2Error(w, 405, "method "+r.Method+" not allowed on "+r.URL.Path+" (allowed: "+allow+")", "invalid_request_error")
		return
	}
	switch rt {
	case routeNotFound:
		h2Error(w, 404, "not found: the mock serves /v1/completions, /v1/chat/completions, /v1/models, /health and /stats", "invalid_request_error")
	case routeHealth:
		w.WriteHeader(200)
	case routeModels:
		h2JSON(w, 200, s.modelsJSON)
	case routeStats:
		h2JSON(w, 200, s.statsJSON())
	default:
		h.generate(w, r, rt)
	}
}

func (h h2Handler) generate(w http.ResponseWriter, r *http.Request, rt route) {
	s := h.s
	arrival := s.since()
	s.c.requests.Add(1)
	body, err := io.ReadAll(io.LimitReader(r.Body, int64(s.cfg.MaxBodyBytes)+1))
	if err != nil {
		return
	}
	if len(body) > s.cfg.MaxBodyBytes {
		s.c.badRequests.Add(1)
		h2Error(w, 413, errBodyTooLarge.Msg, "invalid_request_error")
		return
	}
	req, err := decodeRequest(rt.api(), body, &s.cfg)
	if err != nil {
		s.c.badRequests.Add(1)
		h2Error(w, 400, err.Error(), "invalid_request_error")
		return
	}
	id := s.reqSeq.Add(1)
	st := newStream(s, nil, s.shards[id%uint64(len(s.shards))])
	st.start(id, req, arrival, s.wallBase+int64(arrival), false, false)
	if f := st.fault; f != nil && (f.Kind == Fault429 || f.Kind == Fault503) {
		st.status = 429
		if f.Kind == Fault503 {
			st.status = 503
		}
		w.Header().Set("Retry-After", strconv.FormatInt(f.retryAfter(), 10))
		h2Error(w, st.status, "mock fault: "+http.StatusText(st.status), "server_busy")
		st.finish(arrival, outRejected)
		return
	}
	fl, _ := w.(http.Flusher)
	if req.stream {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(200)
		if req.api == apiChat {
			b, _ := st.appendEvent(nil, chunkRole, 0, "")
			w.Write(b)
		}
		if fl != nil {
			fl.Flush()
		}
	}
	s.submit(st)
	var whole []byte // a whole response's bytes, which may come over several kicks before it is finished
	for {
		select {
		case <-st.kick:
		case <-r.Context().Done():
			st.cancelled.Store(true)
			return
		case <-s.done:
			return
		}
		st.mu.Lock()
		st.pending, st.writing = st.writing[:0], st.pending
		b, fin, drop := st.writing, st.finished, st.dropped
		st.mu.Unlock()
		if !req.stream {
			whole = append(whole, b...)
			if !fin {
				continue
			}
			if drop {
				panic(http.ErrAbortHandler)
			}
			if len(whole) > 0 {
				h2JSON(w, st.status, whole)
			}
			return
		}
		if len(b) > 0 {
			if _, err := w.Write(b); err != nil {
				st.dead.Store(true)
				return
			}
			if fl != nil {
				fl.Flush()
			}
		}
		if drop {
			panic(http.ErrAbortHandler)
		}
		if fin {
			return
		}
	}
}

func h2JSON(w http.ResponseWriter, status int, b []byte) {
	w.Header().Set("Content-Type", ctJSON)
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	w.Write(b)
}

func h2Error(w http.ResponseWriter, status int, msg, typ string) {
	b := appendErrorJSON(nil, strings.ToValidUTF8(msg, "?"), typ, status)
	h2JSON(w, status, append(b, '\n'))
}
