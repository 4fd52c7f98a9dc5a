package llmserve

import "strconv"

// The wire bytes of responses. A stream's chunks are encoded once per
// request into templates (see stream.prepare); sending a token is writing a
// template, with at most the 19 digits of "hail_sent_ns" patched in place.

const (
	tokenText   = " tok" // the text of one output token
	stampDigits = 19     // Unix nanoseconds, until 2286
	doneEvent   = "data: [DONE]\n\n"
	lastChunk   = "0\r\n\r\n"

	headSSE = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
)

// appendFramed appends payload as one HTTP/1.1 chunk when chunked, else as
// it is.
func appendFramed(dst []byte, chunked bool, payload []byte) []byte {
	if !chunked {
		return append(dst, payload...)
	}
	dst = strconv.AppendUint(dst, uint64(len(payload)), 16)
	dst = append(dst, "\r\n"...)
	dst = append(dst, payload...)
	return append(dst, "\r\n"...)
}

// appendTokens appends the text of n tokens.
func appendTokens(dst []byte, n int) []byte {
	for range n {
		dst = append(dst, tokenText...)
	}
	return dst
}

// appendID appends the response id: cmpl- or chatcmpl- and 16 hex digits.
func appendID(dst []byte, api apiKind, id uint64) []byte {
	if api == apiChat {
		dst = append(dst, "chatcmpl-"...)
	} else {
		dst = append(dst, "cmpl-"...)
	}
	const hex = "0123456789abcdef"
	for i := 60; i >= 0; i -= 4 {
		dst = append(dst, hex[id>>uint(i)&15])
	}
	return dst
}

// appendObjectHead appends {"id":…,"object":…,"created":…,"model":…,
// leaving the object open.
func (st *stream) appendObjectHead(dst []byte, object string) []byte {
	dst = append(dst, `{"id":"`...)
	dst = appendID(dst, st.req.api, st.id)
	dst = append(dst, `","object":"`...)
	dst = append(dst, object...)
	dst = append(dst, `","created":`...)
	dst = strconv.AppendInt(dst, st.created, 10)
	dst = append(dst, `,"model":`...)
	return append(dst, st.req.model...)
}

// chunkKind is the content of one streamed chunk.
type chunkKind uint8

const (
	chunkTokens chunkKind = iota // n tokens of text (finish_reason set on the last, completions)
	chunkRole                    // chat: the first delta, role only
	chunkFinish                  // chat: the empty delta carrying finish_reason
	chunkUsage                   // no choices, the usage
)

// appendEvent appends one streamed chunk as an SSE event ("data: {…}\n\n"),
// framed, and returns the offset of its hail_sent_ns digits in dst (-1
// without SendTime). finish is the finish_reason, "" for null.
func (st *stream) appendEvent(dst []byte, kind chunkKind, n int, finish string) ([]byte, int) {
	e := st.event[:0]
	e = append(e, "data: "...)
	object := "text_completion"
	if st.req.api == apiChat {
		object = "chat.completion.chunk"
	}
	e = st.appendObjectHead(e, object)
	e = append(e, `,"choices":[`...)
	switch {
	case kind == chunkUsage:
	case st.req.api == apiCompletions:
		e = append(e, `{"index":0,"text":"`...)
		e = appendTokens(e, n)
		e = append(e, `","logprobs":null,"finish_reason":`...)
		e = appendReason(e, finish)
		e = append(e, `,"stop_reason":null}`...)
	case kind == chunkRole:
		e = append(e, `{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}`...)
	case kind == chunkFinish:
		e = append(e, `{"index":0,"delta":{},"logprobs":null,"finish_reason":`...)
		e = appendReason(e, finish)
		e = append(e, '}')
	default:
		e = append(e, `{"index":0,"delta":{"content":"`...)
		e = appendTokens(e, n)
		e = append(e, `"},"logprobs":null,"finish_reason":null}`...)
	}
	e = append(e, ']')
	switch {
	case kind == chunkUsage:
		e = append(e, `,"usage":`...)
		e = st.appendUsage(e)
	case st.usage:
		e = append(e, `,"usage":null`...)
	}
	stamp := -1
	if st.s.cfg.SendTime {
		e = append(e, `,"hail_sent_ns":`...)
		stamp = len(e)
		e = appendStamp(e, st.s.unixNow())
	}
	e = append(e, "}\n\n"...)
	st.event = e
	if stamp >= 0 {
		stamp += len(dst)
		if st.chunked {
			stamp += len(strconv.AppendUint(nil, uint64(len(e)), 16)) + 2
		}
	}
	return appendFramed(dst, st.chunked, e), stamp
}

// appendReason appends a finish_reason: null, or the quoted reason.
func appendReason(dst []byte, reason string) []byte {
	if reason == "" {
		return append(dst, "null"...)
	}
	dst = append(dst, '"')
	dst = append(dst, reason...)
	return append(dst, '"')
}

// appendUsage appends the usage object of the tokens sent.
func (st *stream) appendUsage(dst []byte) []byte {
	dst = append(dst, `{"prompt_tokens":`...)
	dst = strconv.AppendInt(dst, int64(st.req.promptTokens), 10)
	dst = append(dst, `,"total_tokens":`...)
	dst = strconv.AppendInt(dst, int64(st.req.promptTokens+st.sent), 10)
	dst = append(dst, `,"completion_tokens":`...)
	dst = strconv.AppendInt(dst, int64(st.sent), 10)
	return append(dst, '}')
}

// appendStamp appends ns as exactly stampDigits digits.
func appendStamp(dst []byte, ns int64) []byte {
	var d [stampDigits]byte
	putStamp(d[:], ns)
	return append(dst, d[:]...)
}

// putStamp writes ns into d as stampDigits decimal digits.
func putStamp(d []byte, ns int64) {
	u := uint64(max(ns, 0))
	for i := stampDigits - 1; i >= 0; i-- {
		d[i] = byte('0' + u%10)
		u /= 10
	}
}

// appendWhole appends the non-streaming response body: the whole text, its
// finish_reason and (unless NoUsage) the usage.
func (st *stream) appendWhole(dst []byte) []byte {
	if st.req.api == apiChat {
		dst = st.appendObjectHead(dst, "chat.completion")
		dst = append(dst, `,"choices":[{"index":0,"message":{"role":"assistant","content":"`...)
		dst = appendTokens(dst, st.sent)
		dst = append(dst, `"},"logprobs":null,"finish_reason":`...)
		dst = appendReason(dst, st.finishReason)
		dst = append(dst, '}')
	} else {
		dst = st.appendObjectHead(dst, "text_completion")
		dst = append(dst, `,"choices":[{"index":0,"text":"`...)
		dst = appendTokens(dst, st.sent)
		dst = append(dst, `","logprobs":null,"finish_reason":`...)
		dst = appendReason(dst, st.finishReason)
		dst = append(dst, `,"stop_reason":null}`...)
	}
	dst = append(dst, ']')
	if !st.s.cfg.NoUsage {
		dst = append(dst, `,"usage":`...)
		dst = st.appendUsage(dst)
	}
	return append(dst, "}\n"...)
}

// appendErrorJSON appends an OpenAI error object. msg must need no JSON
// escaping beyond quotes and backslashes (the messages are the mock's own).
func appendErrorJSON(dst []byte, msg, typ string, code int) []byte {
	dst = append(dst, `{"error":{"message":`...)
	dst = appendJSONString(dst, msg)
	dst = append(dst, `,"type":"`...)
	dst = append(dst, typ...)
	dst = append(dst, `","param":null,"code":`...)
	dst = strconv.AppendInt(dst, int64(code), 10)
	return append(dst, "}}"...)
}

// appendJSONString appends s as a JSON string, escaping what JSON requires.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}
