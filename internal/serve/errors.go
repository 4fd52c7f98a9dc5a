package serve

import "github.com/hail-loadgen/hail/internal/http1"

// The errors of what the server reads after a request's head (the head's
// are http1's: http1.ErrRequestIncomplete, …).
var (
	errConnDead     = &http1.RequestError{Status: 0, Msg: "connection failed"}
	errBodyTooLarge = &http1.RequestError{Status: 413, Msg: "request body too large"}
	errBadChunk     = &http1.RequestError{Status: 400, Msg: "malformed chunked body"}
)
