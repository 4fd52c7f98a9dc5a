package enginetest

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// sse serves /sse: an OpenAI-compatible chat completion stream (as vLLM
// sends it: a role-only chunk, content chunks, a usage chunk, [DONE]), or
// a misbehaving one. Its query:
//
//	n=N        content chunks (default 4)
//	k=K        tokens per content chunk, as usage counts them (default 1)
//	gap=D      time between content chunks (default none)
//	usage=U    end: one usage chunk at the end (default); each: usage in
//	           every chunk, completion_tokens cumulative; none: no usage
//	plain=1    plain events ("data: tick N") instead, without [DONE]
//	type=T     the Content-Type (default text/event-stream; "none": none)
//	fault=F    error: an error event without JSON mid-stream, then [DONE];
//	           nodone: no [DONE]; midevent: the response ends inside an
//	           event; afterdone: a chunk after [DONE]; big: a 2 MiB event;
//	           stall: nothing after the first chunk until the client goes;
//	           endless: a chunk every gap until the client goes
func sse(w http.ResponseWriter, r *http.Request, q url.Values) {
	n, k := atoi(q.Get("n"), 4), atoi(q.Get("k"), 1)
	gap, _ := time.ParseDuration(q.Get("gap"))
	usage, fault := q.Get("usage"), q.Get("fault")
	switch ct := q.Get("type"); ct {
	case "":
		w.Header().Set("Content-Type", "text/event-stream")
	case "none":
		w.Header().Set("Content-Type", "application/octet-stream")
	default:
		w.Header().Set("Content-Type", ct)
	}
	rc := http.NewResponseController(w)
	send := func(s string) bool {
		if _, err := io.WriteString(w, s); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	wait := func(d time.Duration) bool { return sleep(r, d) }
	if q.Get("plain") == "1" {
		for i := range n {
			if i > 0 && !wait(gap) || !send(fmt.Sprintf("data: tick %d\n\n", i)) {
				return
			}
		}
		return
	}
	if !send(chunk(`{"role":"assistant","content":""}`, usage, 0)) {
		return
	}
	for i := 1; fault == "endless" || i <= n; i++ {
		if i > 1 && !wait(gap) {
			return
		}
		if !send(chunk(fmt.Sprintf(`{"content":"%s"}`, strings.Repeat(" t", k)), usage, i*k)) {
			return
		}
		switch {
		case fault == "stall":
			<-r.Context().Done()
			return
		case fault == "error" && i == n/2:
			send("event: error\ndata: the model server is overloaded\n\n")
		case fault == "big" && i == 1:
			send("data: " + strings.Repeat("x", 2<<20) + "\n\n")
		}
	}
	if usage == "" || usage == "end" {
		send(fmt.Sprintf(`data: {"id":"cmpl-t","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":%d,"total_tokens":%d}}`+"\n\n", n*k, 9+n*k))
	}
	switch fault {
	case "nodone":
		return
	case "midevent":
		send(`data: {"id":"cmpl-t","choi`)
		return
	}
	send("data: [DONE]\n\n")
	if fault == "afterdone" {
		send(chunk(`{"content":"late"}`, "", 0))
	}
}

// chunk is one chat completion chunk event with delta; usage "each" adds
// usage with completion_tokens cum.
func chunk(delta, usage string, cum int) string {
	u := ""
	if usage == "each" {
		u = fmt.Sprintf(`,"usage":{"prompt_tokens":9,"completion_tokens":%d,"total_tokens":%d}`, cum, 9+cum)
	}
	return fmt.Sprintf(`data: {"id":"cmpl-t","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":%s,"finish_reason":null}]%s}`+"\n\n", delta, u)
}

// atoi is s as a number, def when it is not one.
func atoi(s string, def int) int {
	if v, err := strconv.Atoi(s); err == nil {
		return v
	}
	return def
}
