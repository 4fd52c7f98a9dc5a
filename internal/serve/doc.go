// Package serve implements "hail serve", the load generator's built-in HTTP
// target. It exists for calibration, demos and tests: a known-fast server
// whose behaviour (latency, errors, body sizes, stalls, connection closes)
// can be dialled in per request through query parameters.
//
// # Why a hand-written HTTP/1.1 server
//
// A load generator is only as trustworthy as the target it is measured
// against. net/http's server allocates several objects per request (the
// Request, its Header map, a bufio pair per connection, a context, a
// response writer), parses every header into a map and runs a fair amount of
// generic machinery. On a small machine a client written to be lean on one
// core can then outrun the server on the other, and a calibration run ends up
// measuring the target instead of the generator.
//
// This package therefore speaks HTTP/1.1 directly on net.Listener/net.Conn:
//
//   - one goroutine per connection, with one fixed read buffer (default
//     4 KiB) that grows only while an unusually large request head (or
//     chunk-size line or trailer section) is being read, to a little over
//     MaxHeaderBytes, and shrinks back afterwards; request bodies that do
//     not fit in it are read into a separate per-connection body buffer,
//     capped at MaxBodyBytes (bodies no endpoint needs are discarded through
//     a small fixed buffer instead);
//   - the request head is parsed in place: method, target, path, query and
//     the few headers the server acts on (Content-Length, Transfer-Encoding,
//     Connection, Expect, Content-Type) are byte slices into the read
//     buffer, other headers are validated and skipped;
//   - responses are appended to a per-connection output buffer that is only
//     written to the socket when the server would otherwise block reading,
//     so pipelined requests are answered in order with one write;
//   - the plain "GET /" keep-alive response is encoded once at start-up.
//
// The plain keep-alive GET path performs zero heap allocations per request
// (see BenchmarkPlainGET and TestPlainGETZeroAllocs).
//
// # Protocol support
//
// HTTP/1.1 and HTTP/1.0 (HTTP/1.0 connections are closed after each response
// unless the request asked for keep-alive), pipelining, Connection: close,
// request bodies with Content-Length or Transfer-Encoding: chunked (chunk
// extensions and trailers are accepted and ignored), Expect: 100-continue.
// Malformed requests get 400 and the connection is closed; a request head
// larger than MaxHeaderBytes gets 431, a body larger than MaxBodyBytes gets
// 413, an unsupported transfer coding 501, an HTTP version other than 1.x
// 505, an Expect other than 100-continue 417 — all followed by a close.
// The server sends no Date header and does not require Host.
//
// # Endpoints
//
//	GET /healthz            200 "ok\n" (not counted in Stats)
//	GET /stats              200 JSON Stats (not counted)
//	POST /stats/reset       204; zeroes the counters, keeps stored items
//	ANY /echo               200, body and Content-Type copied from the request;
//	                        ?headers=1 returns the request head as text instead
//	POST /items             201 {"id":"<id>"} + Location; stores the JSON body
//	GET /items              200 {"count":N}
//	GET /items/{id}         200 {"id":"<id>","data":<body or null>} or 404
//	DELETE /items/{id}      204, or 404 when unknown or already deleted
//	anything else           200 "hello world\n" (text/plain)
//
// HEAD is accepted wherever GET is and sends the same head without a body.
//
// # Fault injection
//
// Every endpoint except /healthz and /stats* accepts these query parameters,
// which can be combined:
//
//	delay=5ms               fixed delay; or a distribution delay=2ms:90,50ms:10
//	                        (value:percent, sum <= 100, the rest is not delayed);
//	                        Go durations, plain numbers mean milliseconds
//	status=503:10           10% get 503; lists status=503:10,500:5; status=404
//	                        alone means 100%
//	size=1k                 body of that many bytes (k=1024, m=1048576, max 64m)
//	stall=2s@4s             responses that would be sent in [T0+4s, T0+6s) are
//	                        held until T0+6s; T0 is when the first request
//	                        carrying this exact value arrived at this server
//	close=5                 5% of responses carry Connection: close and the
//	                        connection is closed after them
//	chunked=1               send the body with Transfer-Encoding: chunked in
//	                        chunks of up to 4 KiB (HTTP/1.1 requests only)
//
// A response whose status is chosen by status= is the default response (the
// "hello world" body or the size= body) with that status: the endpoint's own
// handler does not run, so an injected error on POST /items creates nothing.
// Unknown parameters are ignored; a bad value of a known one gets 400 with a
// one-line body naming the parameter. Parsed parameter sets are cached per
// connection, keyed by the raw query string.
package serve
