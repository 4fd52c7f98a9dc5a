package llmserve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// apiKind is the endpoint a request came to.
type apiKind uint8

const (
	apiCompletions apiKind = iota // /v1/completions
	apiChat                       // /v1/chat/completions
)

var apiNames = [...]string{apiCompletions: "completions", apiChat: "chat"}

// genRequest is what the mock needs from a generation request.
type genRequest struct {
	api          apiKind
	model        []byte // JSON-encoded (a quoted string)
	stream       bool
	includeUsage bool // stream_options.include_usage
	maxTokens    int
	minTokens    int
	ignoreEOS    bool
	promptTokens int
	blocks       []uint64 // the prompt's block hashes, with a prefix cache
	cachedTokens int      // the prompt's tokens found in the prefix cache
}

// wireRequest is the part of an OpenAI request body the mock reads; other
// fields are ignored.
type wireRequest struct {
	Model               string          `json:"model"`
	Prompt              json.RawMessage `json:"prompt"`
	Messages            []wireMessage   `json:"messages"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	MinTokens           int             `json:"min_tokens"`
	IgnoreEOS           bool            `json:"ignore_eos"`
	Stream              bool            `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	N *int `json:"n"`
}

type wireMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type wirePart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// decodeRequest reads a generation request body. The error is the message
// of a 400 answer.
func decodeRequest(api apiKind, body []byte, cfg *Config) (genRequest, error) {
	var w wireRequest
	if err := json.Unmarshal(body, &w); err != nil {
		return genRequest{}, fmt.Errorf("the body is not a JSON request object: %v", err)
	}
	g := genRequest{api: api, stream: w.Stream, minTokens: w.MinTokens, ignoreEOS: w.IgnoreEOS, maxTokens: cfg.DefaultMaxTokens}
	model := w.Model
	if model == "" {
		model = cfg.Model
	}
	g.model, _ = json.Marshal(model)
	switch {
	case w.MaxTokens != nil:
		g.maxTokens = *w.MaxTokens
	case w.MaxCompletionTokens != nil:
		g.maxTokens = *w.MaxCompletionTokens
	}
	if g.maxTokens < 1 || g.maxTokens > maxOutputTokens {
		return genRequest{}, fmt.Errorf("max_tokens %d: must be between 1 and %d", g.maxTokens, maxOutputTokens)
	}
	if g.minTokens < 0 || g.minTokens > g.maxTokens {
		return genRequest{}, fmt.Errorf("min_tokens %d: must be between 0 and max_tokens (%d)", g.minTokens, g.maxTokens)
	}
	if w.N != nil && *w.N != 1 {
		return genRequest{}, fmt.Errorf("n %d: the mock generates one choice per request (n must be 1)", *w.N)
	}
	if w.StreamOptions != nil {
		if !w.Stream {
			return genRequest{}, fmt.Errorf("stream_options can only be set when stream is true")
		}
		g.includeUsage = w.StreamOptions.IncludeUsage
	}
	var err error
	var h *prefixHasher
	if cfg.PrefixCacheTokens > 0 {
		h = &prefixHasher{}
	}
	if api == apiCompletions {
		g.promptTokens, err = promptTokens(w.Prompt, h)
	} else {
		g.promptTokens, err = messageTokens(w.Messages, h)
	}
	if h != nil {
		g.blocks = h.blocks
	}
	return g, err
}

// promptTokens counts a completions prompt: a string, a list of one string,
// or a list of token ids.
func promptTokens(raw json.RawMessage, h *prefixHasher) (int, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return 0, fmt.Errorf("prompt is required")
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		h.hash(s)
		return countTokens(s), nil
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		if len(list) != 1 {
			return 0, fmt.Errorf("prompt: a list of %d prompts; the mock takes one prompt per request", len(list))
		}
		h.hash(list[0])
		return countTokens(list[0]), nil
	}
	var ids []int64
	if json.Unmarshal(raw, &ids) == nil {
		if h != nil {
			for _, id := range ids {
				h.hash(strconv.FormatInt(id, 10))
			}
		}
		return len(ids), nil
	}
	return 0, fmt.Errorf("prompt must be a string, a list of one string, or a list of token ids")
}

// messageTokens counts the text of chat messages: string contents and the
// text parts of list contents.
func messageTokens(msgs []wireMessage, h *prefixHasher) (int, error) {
	if len(msgs) == 0 {
		return 0, fmt.Errorf("messages is required and must not be empty")
	}
	n := 0
	for i, m := range msgs {
		c := bytes.TrimSpace(m.Content)
		if len(c) == 0 || string(c) == "null" {
			continue
		}
		var s string
		if json.Unmarshal(c, &s) == nil {
			h.hash(s)
			n += countTokens(s)
			continue
		}
		var parts []wirePart
		if err := json.Unmarshal(c, &parts); err != nil {
			return 0, fmt.Errorf("messages[%d].content must be a string or a list of content parts", i)
		}
		for _, p := range parts {
			if p.Type == "text" {
				h.hash(p.Text)
				n += countTokens(p.Text)
			}
		}
	}
	return n, nil
}

// countTokens is the mock's (and hail's) token approximation: the number of
// whitespace-separated pieces of s (maximal runs of bytes other than ASCII
// space, tab, newline, vertical tab, form feed and carriage return).
func countTokens(s string) int {
	n, in := 0, false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\n', '\v', '\f', '\r':
			in = false
		default:
			if !in {
				n++
			}
			in = true
		}
	}
	return n
}
