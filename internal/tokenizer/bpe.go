package tokenizer

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// bpe is a byte-pair-encoding model: a vocabulary and the ranked merges
// that build its tokens from characters.
type bpe struct {
	vocab        map[string]int
	ranks        map[string]int // "left\x00right" → rank (lower merges first)
	byteFallback bool           // a character outside the vocabulary is its UTF-8 bytes' <0xXX> tokens
	ignoreMerges bool           // a piece in the vocabulary is one token, merges or not
}

// parseBPE reads the "model" part.
func parseBPE(raw json.RawMessage) (*bpe, error) {
	var m struct {
		Vocab                   map[string]int    `json:"vocab"`
		Merges                  []json.RawMessage `json:"merges"`
		ByteFallback            bool              `json:"byte_fallback"`
		IgnoreMerges            bool              `json:"ignore_merges"`
		ContinuingSubwordPrefix *string           `json:"continuing_subword_prefix"`
		EndOfWordSuffix         *string           `json:"end_of_word_suffix"`
	}
	typ, err := typeOf(raw)
	if err != nil {
		return nil, fmt.Errorf("its model: %v", err)
	}
	if typ != "BPE" {
		return nil, unsupported("model", typ)
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("its model: %v", err)
	}
	if len(m.Vocab) == 0 {
		return nil, fmt.Errorf("its BPE model has no vocabulary")
	}
	if m.ContinuingSubwordPrefix != nil && *m.ContinuingSubwordPrefix != "" || m.EndOfWordSuffix != nil && *m.EndOfWordSuffix != "" {
		return nil, fmt.Errorf("its BPE model has a subword prefix or word suffix, which hail does not read")
	}
	b := &bpe{vocab: m.Vocab, ranks: make(map[string]int, len(m.Merges)), byteFallback: m.ByteFallback, ignoreMerges: m.IgnoreMerges}
	for i, raw := range m.Merges {
		var left, right string
		var s string
		var pair []string
		switch {
		case json.Unmarshal(raw, &s) == nil:
			var ok bool
			if left, right, ok = strings.Cut(s, " "); !ok {
				return nil, fmt.Errorf("its merge %d %q is not two tokens", i+1, s)
			}
		case json.Unmarshal(raw, &pair) == nil && len(pair) == 2:
			left, right = pair[0], pair[1]
		default:
			return nil, fmt.Errorf("its merge %d %s is neither \"A B\" nor [\"A\", \"B\"]", i+1, raw)
		}
		if _, dup := b.ranks[left+"\x00"+right]; !dup {
			b.ranks[left+"\x00"+right] = i
		}
	}
	return b, nil
}

// count is the number of tokens of one pre-tokenized piece.
func (b *bpe) count(s string) int {
	if s == "" {
		return 0
	}
	if b.ignoreMerges {
		if _, ok := b.vocab[s]; ok {
			return 1
		}
	}
	// The piece's characters, merged pair by pair, the best-ranked (and
	// leftmost) first.
	var syms []string
	for i := 0; i < len(s); {
		_, n := utf8.DecodeRuneInString(s[i:])
		syms = append(syms, s[i:i+n])
		i += n
	}
	for len(syms) > 1 {
		best, at := -1, -1
		for i := 0; i+1 < len(syms); i++ {
			if r, ok := b.ranks[syms[i]+"\x00"+syms[i+1]]; ok && (best < 0 || r < best) {
				best, at = r, i
			}
		}
		if at < 0 {
			break
		}
		syms[at] += syms[at+1]
		syms = append(syms[:at+1], syms[at+2:]...)
	}
	n := 0
	for _, sym := range syms {
		switch _, ok := b.vocab[sym]; {
		case ok:
			n++
		case b.byteFallback:
			n += len(sym)
		default:
			n++ // the unknown token
		}
	}
	return n
}
