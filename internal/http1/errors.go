package http1

import "errors"

// Errors returned by [Parser.Feed] and [Parser.EOF]. They are sentinel values,
// to be tested with errors.Is. After any of them the parser is stuck in the
// error and the connection must not be reused.
var (
	// ErrMalformedStatusLine means the status line is not
	// "HTTP/1.x SP 3DIGIT [SP reason]".
	ErrMalformedStatusLine = errors.New("malformed status line")

	// ErrMalformedHeader means a header or trailer line is not
	// "token: value", or is an obsolete line folding (a continuation line
	// starting with a space or tab).
	ErrMalformedHeader = errors.New("malformed header")

	// ErrHeaderTooLarge means the status line and headers (including any
	// 1xx responses), or the trailers, exceed Parser.MaxHeaderBytes.
	ErrHeaderTooLarge = errors.New("response header too large")

	// ErrBadContentLength means a Content-Length header is not a decimal
	// number, or several Content-Length values disagree.
	ErrBadContentLength = errors.New("bad content-length")

	// ErrBadChunk means the chunked body is malformed: a bad chunk-size
	// line, or chunk data not followed by CRLF.
	ErrBadChunk = errors.New("malformed chunked encoding")

	// ErrUnexpectedEOF means the peer closed the connection after sending
	// part of a response.
	ErrUnexpectedEOF = errors.New("connection closed mid-response")

	// ErrClosedBeforeResponse means the peer closed the connection before
	// sending any byte of the response.
	ErrClosedBeforeResponse = errors.New("connection closed before response")

	// ErrUnexpectedUpgrade means the server answered 101 Switching
	// Protocols, which a load generator never asks for.
	ErrUnexpectedUpgrade = errors.New("unexpected 101 switching protocols")
)
