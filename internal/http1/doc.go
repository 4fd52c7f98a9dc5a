// Package http1 is the HTTP/1.1 client codec shared by hail's engines: the
// net.Conn engine and the io_uring engine both encode requests and parse
// responses with it.
//
// It is hand-written instead of built on net/http for two reasons. First,
// net/http allocates on every request (an *http.Request and *http.Response,
// header maps, body readers, bufio buffers), and a load generator that
// allocates per request measures its own garbage collector as much as the
// server. Second, net/http owns the connection and reads through its own
// bufio.Reader, so it cannot parse bytes from a buffer that the caller
// owns. The io_uring engine receives responses in buffers that the kernel
// filled on completion of a read it submitted earlier; it needs a parser it
// can hand those bytes to, not one that wants to call Read itself.
//
// Requests are encoded once, before a run: build a [RequestSpec], check it
// with [RequestSpec.Validate] and turn it into wire bytes with
// [AppendRequest]; the engines then write the same bytes over and over.
//
// Responses are parsed incrementally by a [Parser], with no allocation per
// response once its reusable buffers have grown. The caller owns the read
// buffer and drives the parser with the "keep the tail" loop:
//
//	p.Reset(isHEAD)
//	for {
//		n, done, err := p.Feed(buf[:fill])
//		// handle err: the connection cannot be reused
//		copy(buf, buf[n:fill]) // keep the unconsumed tail at the front
//		fill -= n
//		if done {
//			break // buf[:fill] already belongs to the next response
//		}
//		if fill == len(buf) {
//			// a single header or chunk-size line does not fit in buf
//		}
//		// read more bytes into buf[fill:]; on EOF call p.EOF()
//	}
//
// The parser never keeps a reference to the bytes it is fed: values it
// reports (Location, Body) are copied into buffers it owns.
package http1
