package llmserve

import (
	"bytes"

	"github.com/hail-loadgen/hail/internal/http1"
)

// The errors of reading a request beyond http1.ParseRequestHead's.
var (
	// errIncomplete: the head or the chunked body is not all there yet.
	errIncomplete   = http1.ErrRequestIncomplete
	errBodyTooLarge = &http1.RequestError{Status: 413, Msg: "request body too large"}
	errChunk        = &http1.RequestError{Status: 400, Msg: "malformed chunked body"}
)

// maxHeadBytes caps a request head (parsed by http1.ParseRequestHead).
const maxHeadBytes = 64 << 10

// chunkedEnd finds the end of the chunked body at the start of b without
// copying it: it returns the body's wire length, or errIncomplete. Chunk
// extensions and trailer fields are skipped; a body that decodes to more
// than maxBody bytes is errBodyTooLarge.
func chunkedEnd(b []byte, maxBody int) (end int, err *http1.RequestError) {
	pos, size := 0, 0
	for {
		line, next, err := chunkLine(b, pos)
		if err != nil {
			return 0, err
		}
		n, ok := http1.ParseChunkSize(line)
		if !ok || n > int64(maxBody-size) {
			if ok {
				return 0, errBodyTooLarge
			}
			return 0, errChunk
		}
		pos = next
		if n == 0 {
			break
		}
		size += int(n)
		if len(b) < pos+int(n)+2 {
			return 0, errIncomplete
		}
		pos += int(n)
		if b[pos] == '\r' {
			pos++
		}
		if b[pos] != '\n' {
			return 0, errChunk
		}
		pos++
	}
	for trailers := 0; ; trailers++ { // trailer fields, then the empty line
		line, next, err := chunkLine(b, pos)
		if err != nil {
			return 0, err
		}
		pos = next
		if len(line) == 0 {
			return pos, nil
		}
		if trailers > 100 || bytes.IndexByte(line, ':') <= 0 {
			return 0, errChunk
		}
	}
}

// chunkLine is headLine for the lines of a chunked body (at most 4 KiB).
func chunkLine(b []byte, pos int) ([]byte, int, *http1.RequestError) {
	i := bytes.IndexByte(b[pos:min(len(b), pos+4096)], '\n')
	if i < 0 {
		if len(b)-pos >= 4096 {
			return nil, 0, errChunk
		}
		return nil, 0, errIncomplete
	}
	line := b[pos : pos+i]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	return line, pos + i + 1, nil
}

// decodeChunked appends the data of the complete chunked body b (checked
// by chunkedEnd) to dst.
func decodeChunked(dst, b []byte) []byte {
	pos := 0
	for {
		line, next, _ := chunkLine(b, pos)
		n, _ := http1.ParseChunkSize(line)
		if n == 0 {
			return dst
		}
		dst = append(dst, b[next:next+int(n)]...)
		pos = next + int(n)
		if b[pos] == '\r' {
			pos++
		}
		pos++
	}
}
