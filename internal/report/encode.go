package report

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"math"
	"sync"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// The V2 encoding's cookies, as HdrHistogram writes them (version 2, word
// size 8 in the low bits).
const (
	payloadCookie    = hdr.V2EncodingCookieBase | 0x10
	compressedCookie = hdr.V2CompressedEncodingCookieBase | 0x10
	payloadHeader    = 40
)

// deflaters are zlib writers at HdrHistogram's level, reused: a new
// writer at that level allocates about a megabyte, and a report encodes
// some twenty histograms (each stage's and each step's more).
var deflaters = sync.Pool{New: func() any {
	w, _ := zlib.NewWriterLevel(nil, zlib.BestCompression)
	return w
}}

// encode returns h in HdrHistogram's V2 compressed encoding, base64: the
// bytes h.Encode(hdr.V2CompressedEncodingCookieBase) returns, built
// without its per-count writes and its fresh compressor (TestEncodeAsHdr
// holds them equal).
func encode(h *hdr.Histogram) string { return snapshots(nil).encode(h) }

// encode is the package's encode reading h's counts from m.
func (m snapshots) encode(h *hdr.Histogram) string {
	s := m.of(h)
	// Counts up to the highest recorded value's, at least one.
	limit := 1
	for i := len(s.Counts) - 1; i > 0; i-- {
		if s.Counts[i] != 0 {
			limit = i + 1
			break
		}
	}
	p := make([]byte, payloadHeader, payloadHeader+limit+16)
	for i := 0; i < limit; {
		c := s.Counts[i]
		i++
		if c == 0 {
			zeros := int64(1)
			for i < limit && s.Counts[i] == 0 {
				zeros++
				i++
			}
			if zeros > 1 {
				p = appendZigZag(p, -zeros) // a run of zeros
				continue
			}
		}
		p = appendZigZag(p, c)
	}
	ratio := s.IntegerToDoubleConversionRatio
	if ratio == 0 {
		ratio = 1
	}
	be := binary.BigEndian
	be.PutUint32(p[0:], uint32(payloadCookie))
	be.PutUint32(p[4:], uint32(len(p)-payloadHeader))
	be.PutUint32(p[8:], 0) // normalizing index offset: counts are unrotated
	be.PutUint32(p[12:], uint32(int32(s.SignificantFigures)))
	be.PutUint64(p[16:], uint64(s.LowestTrackableValue))
	be.PutUint64(p[24:], uint64(s.HighestTrackableValue))
	be.PutUint64(p[32:], math.Float64bits(ratio))

	var z bytes.Buffer
	z.Write([]byte{0, 0, 0, 0, 0, 0, 0, 0}) // the cookie and the compressed length, below
	w := deflaters.Get().(*zlib.Writer)
	w.Reset(&z)
	_, err := w.Write(p)
	if err == nil {
		err = w.Close()
	}
	w.Reset(nil)
	deflaters.Put(w)
	if err != nil {
		return ""
	}
	b := z.Bytes()
	be.PutUint32(b[0:], uint32(compressedCookie))
	be.PutUint32(b[4:], uint32(len(b)-8))
	return base64.StdEncoding.EncodeToString(b)
}

// appendZigZag appends v to b as HdrHistogram's ZigZag LEB128 of at most
// nine bytes (the ninth holds eight bits).
func appendZigZag(b []byte, v int64) []byte {
	u := uint64((v << 1) ^ (v >> 63))
	for i := 0; i < 8; i++ {
		if u>>7 == 0 {
			return append(b, byte(u))
		}
		b = append(b, byte(u&0x7f|0x80))
		u >>= 7
	}
	return append(b, byte(u))
}
