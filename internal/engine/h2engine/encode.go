package h2engine

// The client's wire encoding: frame headers, SETTINGS and WINDOW_UPDATE
// frames, a request's HEADERS frames and its HPACK header block.

import (
	"encoding/binary"
	"net/http"
	"strconv"
	"strings"

	"golang.org/x/net/http2"
)

// appendFrameHeader appends a frame header (RFC 9113 §4.1).
func appendFrameHeader(b []byte, length int, t http2.FrameType, flags http2.Flags, id uint32) []byte {
	return append(b, byte(length>>16), byte(length>>8), byte(length), byte(t), byte(flags),
		byte(id>>24)&0x7f, byte(id>>16), byte(id>>8), byte(id))
}

// appendSetting appends one setting of a SETTINGS frame's payload.
func appendSetting(b []byte, id http2.SettingID, v uint32) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(id))
	return binary.BigEndian.AppendUint32(b, v)
}

// appendWindowUpdate appends a WINDOW_UPDATE frame for stream id (0: the connection).
func appendWindowUpdate(b []byte, id uint32, inc uint32) []byte {
	b = appendFrameHeader(b, 4, http2.FrameWindowUpdate, 0, id)
	return binary.BigEndian.AppendUint32(b, inc&0x7fffffff)
}

// appendHeaders appends a HEADERS frame (and CONTINUATIONs) carrying block.
func appendHeaders(b []byte, id uint32, block []byte, endStream bool, maxFrame int) []byte {
	flags := http2.Flags(0)
	if endStream {
		flags |= http2.FlagHeadersEndStream
	}
	first := true
	for {
		n := min(len(block), maxFrame)
		f := flags
		if n == len(block) {
			f |= http2.FlagHeadersEndHeaders
		}
		t := http2.FrameHeaders
		if !first {
			t, f = http2.FrameContinuation, f&http2.FlagHeadersEndHeaders
		}
		b = appendFrameHeader(b, n, t, f, id)
		b = append(b, block[:n]...)
		block = block[n:]
		first = false
		if len(block) == 0 {
			return b
		}
	}
}

// h2Block is the template's HEADERS block, encoded once: pseudo-headers
// from the static table, other fields as literals the server does not
// index (so the block is valid on any connection, in any order).
func (tp *template) h2Block() []byte {
	if tp.block == nil {
		tp.base = tp.appendBase(nil)
		tp.block = tp.appendBlock(nil, int(tp.clen))
	}
	return tp.block
}

// appendBlock appends the template's HEADERS block for a body of n bytes,
// its own or a shared one (h2Block first made the fields before
// content-length).
func (tp *template) appendBlock(b []byte, n int) []byte {
	b = append(b, tp.base...)
	if n > 0 && !tp.grpc {
		var num [20]byte
		d := strconv.AppendInt(num[:0], int64(n), 10)
		b = appendInt(b, 4, 0x00, 28)
		b = appendInt(b, 7, 0x00, uint64(len(d)))
		b = append(b, d...)
	}
	return b
}

// appendBase appends the template's header fields but content-length.
func (tp *template) appendBase(b []byte) []byte {
	r := tp.req
	switch r.Method {
	case http.MethodGet:
		b = append(b, 0x82)
	case http.MethodPost:
		b = append(b, 0x83)
	default:
		b = appendLiteralIndexed(b, 2, r.Method)
	}
	if r.URL.Scheme == "https" {
		b = append(b, 0x87)
	} else {
		b = append(b, 0x86)
	}
	host := r.Host
	if host == "" {
		host = r.URL.Host
	}
	b = appendLiteralIndexed(b, 1, host)
	if path := r.URL.RequestURI(); path == "/" {
		b = append(b, 0x84)
	} else {
		b = appendLiteralIndexed(b, 4, path)
	}
	for name, vs := range r.Header {
		lname := strings.ToLower(name)
		for _, v := range vs {
			b = append(b, 0x00)
			b = appendString(b, lname)
			b = appendString(b, v)
		}
	}
	return b
}

// appendLiteralIndexed appends a literal field without indexing whose name
// is static-table entry idx.
func appendLiteralIndexed(b []byte, idx uint64, value string) []byte {
	b = appendInt(b, 4, 0x00, idx)
	return appendString(b, value)
}

// appendString appends an HPACK string literal, not Huffman-coded.
func appendString(b []byte, s string) []byte {
	b = appendInt(b, 7, 0x00, uint64(len(s)))
	return append(b, s...)
}

// appendInt appends an HPACK integer with an n-bit prefix (RFC 7541 §5.1).
func appendInt(b []byte, n uint, first byte, v uint64) []byte {
	limit := uint64(1)<<n - 1
	if v < limit {
		return append(b, first|byte(v))
	}
	b = append(b, first|byte(limit))
	v -= limit
	for v >= 128 {
		b = append(b, byte(v&0x7f)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}
