// Package llmserve is "hail serve --openai": a mock OpenAI-compatible
// inference server to load-test against without a GPU. It answers
// /v1/completions and /v1/chat/completions, streaming (server-sent events)
// and not, with the timing of an inference engine — a fixed number of
// batch slots with a queue in front, a prefill cost per prompt token, and a
// time between output tokens drawn from a distribution — and with faults
// on demand. It speaks HTTP/1.1 and HTTP/2 (h2c with prior knowledge) on
// one port, and can log every request with the kernel's receive time, for
// exact checks of a client's measurements.
//
// # Endpoints
//
//	POST /v1/completions        prompt → choices[0].text
//	POST /v1/chat/completions   messages → choices[0].message / choices[0].delta
//	GET  /v1/models             the model (Config.Model)
//	GET  /health                200, empty
//	GET  /stats                 the counters (Stats) as JSON
//
// Request fields read: model (echoed back; default Config.Model), prompt
// (a string, a list of one string, or a list of token ids), messages
// (string contents and the text parts of list contents), max_tokens or
// max_completion_tokens (default Config.DefaultMaxTokens), min_tokens,
// ignore_eos, stream, stream_options.include_usage, n (must be 1). Other
// fields are ignored. A bad request gets 400 with an OpenAI error object
// ({"error":{"message":…,"type":…,"param":null,"code":…}}).
//
// # Tokens
//
// The mock counts prompt tokens the way hail approximates them: a prompt's
// tokens are its whitespace-separated pieces (maximal runs of bytes other
// than ASCII space, tab, newline, vertical tab, form feed and carriage
// return); a list of token ids counts its ids; a chat request counts the
// pieces of all its messages' text. Every output token is the text " tok"
// (so the output's whitespace-separated pieces are its tokens too).
//
// # Timing
//
// A request takes a batch slot when one is free, else it waits, first in
// first out, for one (a queued request whose client has gone away is
// skipped; a generating one frees its slot at its next event, or within
// goneCheck, a second, when that is further away). From the moment it
// takes a slot:
//
//	first token   = slot + PrefillPerToken × prompt tokens (+ stagger)
//	token i (i>0) = token i−1 + a draw from ITL
//
// so that time to first token = queue wait + prefill. With Stagger, the
// first token also waits a uniform draw in [0, mean ITL) — as a request
// joining a running batch waits for the decode step in progress — so that
// streams arriving together do not tick together. Each stream has its own
// timeline; the times are absolute (a late send does not delay the tokens
// after it). The scheduler wakes at most once per Config.Tick (default: the
// mean ITL ÷ 25, at most 2 ms) and sends everything due by then, so a chunk
// may go out up to a tick late: fewer wake-ups are what keep the mock's CPU
// per chunk low (a negative Tick wakes for every chunk). A streamed response sends its first token alone, then
// TokensPerChunk tokens per chunk (the last chunk may carry fewer), each
// chunk when its last token is due. The output length is max_tokens; with
// EOSPercent > 0 and without ignore_eos, each token after min_tokens ends
// the output with that chance (finish_reason "stop" instead of "length").
// A non-streaming response is sent whole when its last token is due.
//
// # Streamed responses
//
// Streams are text/event-stream, HTTP/1.1 chunked (HTTP/1.0: ended by
// closing the connection), each chunk one event "data: {…}\n\n", the last
// "data: [DONE]\n\n". The response head goes out when the request arrives,
// before it waits for a slot (as vLLM's does). Completions chunks (vLLM's
// shape):
//
//	{"id":"cmpl-…","object":"text_completion","created":…,"model":…,
//	 "choices":[{"index":0,"text":" tok","logprobs":null,"finish_reason":null,"stop_reason":null}]}
//
// the last one with "finish_reason":"length" (or "stop"). Chat (OpenAI's
// shape): a first chunk with the role only, sent with the response head,
// then the content deltas, then an empty delta carrying the finish_reason:
//
//	{"id":"chatcmpl-…","object":"chat.completion.chunk",…,"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}
//	{…,"choices":[{"index":0,"delta":{"content":" tok"},"logprobs":null,"finish_reason":null}]}
//	{…,"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"length"}]}
//
// With stream_options.include_usage (and usage not turned off), every chunk
// carries "usage":null and a last chunk before [DONE] carries no choices
// and the usage: {"prompt_tokens":P,"total_tokens":P+C,"completion_tokens":C}.
// With Config.SendTime every chunk also carries "hail_sent_ns": the Unix
// time in nanoseconds when it was written (19 digits).
//
// # Faults
//
// Config.Faults is a mix (KIND:PERCENT[:DURATION]); a request draws at most
// one fault:
//
//	429, 503   answered at once, with Retry-After (seconds, default 1) and an
//	           error object; the request takes no slot
//	error      a streamed response sends, in place of a chunk drawn uniformly
//	           among its chunks, data: {"error":{…,"code":500}} and then
//	           [DONE]; a non-streaming one is answered 500 when that token is due
//	stall      the chunk drawn (or the first token) comes DURATION late; the
//	           rest of the stream follows on its own timeline
//	drop       in place of the chunk drawn, an HTTP/1.x connection is closed
//	           (no last chunk), an HTTP/2 stream is reset
//
// Draws are seeded: request i's fault, fault position, output length,
// stagger and inter-token times depend only on Config.Seed and i (the
// order in which requests arrive).
//
// # The request log
//
// With Config.Log the mock writes one CSV line per request when it ends,
// after this header:
//
//	request,proto,endpoint,stream,arrival_ns,arrival_clock,admit_ns,first_token_ns,end_ns,
//	prompt_tokens,max_tokens,output_tokens,tokens_sent,chunks_sent,status,fault,fault_at,outcome,cached_tokens
//
// request is the request's number (1, 2, … in arrival order); proto http1
// or h2; endpoint completions or chat; stream true or false. The times are
// Unix nanoseconds (0: never): arrival_ns is, with arrival_clock "kernel",
// the kernel's receive time (SO_TIMESTAMPNS) of the read that completed the
// request, else ("server") when the mock read it; admit_ns when it took a
// slot; first_token_ns when its first token was written to the socket (a
// non-streaming response: when it was written); end_ns when its last byte
// (or its fault, or the client's disappearance) was due. output_tokens is
// the length the "model" chose, tokens_sent and chunks_sent what went out;
// status the HTTP status; fault the fault drawn (none, 429, 503, error,
// stall, drop) and fault_at the tokens sent before it struck; outcome one
// of complete, error_event, dropped, client_gone, rejected, unfinished (the
// server closed first); cached_tokens the prompt's leading tokens found in
// the prefix cache (Config.PrefixCacheTokens), which it did not prefill.
//
// # How it is built, and why
//
// The mock must not be the bottleneck of the clients it measures: its goal
// is at most 8 µs of CPU per streamed chunk. So, as hail serve does, it
// speaks HTTP/1.1 itself on raw connections (net/http's server would cost
// a goroutine wake-up, a timer and a flush per chunk): one goroutine per
// connection reads and parses requests and writes response heads; a
// stream's chunks are written by its shard — one scheduler goroutine per
// CPU, holding its streams in a heap by their next event and sleeping on
// one precise timer (schedule.Alarm) — straight to the socket with a
// non-blocking write. Each stream's chunks are encoded into templates when
// it starts (the JSON is never encoded per token: a chunk is the same
// bytes every time, but for the 19 digits of hail_sent_ns). When a socket
// is full, the rest goes to the connection's goroutine, which writes it
// blocking while the shard goes on with other streams. HTTP/2 goes through
// net/http's HTTP/2 server (the mock does not write HTTP/2 itself): there
// each chunk is handed to the request's handler goroutine, which costs a
// wake-up per chunk.
package llmserve
