package tokenizer

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// Tokenizer is a loaded tokenizer.json. It is safe for concurrent use.
type Tokenizer struct {
	norm  []normalizer
	pre   []preTokenizer
	bpe   *bpe
	cache table
}

// file is the part of tokenizer.json read here.
type file struct {
	Normalizer   json.RawMessage `json:"normalizer"`
	PreTokenizer json.RawMessage `json:"pre_tokenizer"`
	Model        json.RawMessage `json:"model"`
}

// Load reads a tokenizer.json; its error names the file and the part it
// cannot read.
func Load(path string) (*Tokenizer, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	t, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return t, nil
}

// Parse reads a tokenizer.json's contents.
func Parse(b []byte) (*Tokenizer, error) {
	var f file
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("not a tokenizer.json (%v)", err)
	}
	if len(f.Model) == 0 || string(f.Model) == "null" {
		return nil, fmt.Errorf("not a tokenizer.json: no \"model\"")
	}
	t := &Tokenizer{}
	var err error
	if t.norm, err = parseNormalizer(f.Normalizer); err != nil {
		return nil, err
	}
	if t.pre, err = parsePreTokenizer(f.PreTokenizer); err != nil {
		return nil, err
	}
	if t.bpe, err = parseBPE(f.Model); err != nil {
		return nil, err
	}
	return t, nil
}

// Count implements dataset.Counter: the tokens of text, without the
// special tokens a chat template or the server adds.
func (t *Tokenizer) Count(text []byte) int {
	n := 0
	first := true
	for start := 0; start < len(text); {
		end := cut(text, start)
		n += t.piece(text[start:end], first)
		first = false
		start = end
	}
	return n
}

// cut is the end of the piece that starts at start: the next space after
// start that a non-space follows (GPT-style patterns keep such a space
// with what follows and end whitespace before it; Metaspace splits before
// it).
func cut(text []byte, start int) int {
	for i := start + 1; i+1 < len(text); i++ {
		if text[i] == ' ' && !space(text[i+1]) {
			return i
		}
	}
	return len(text)
}

// space is ASCII whitespace.
func space(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// piece counts one piece: from the table, or computed and kept there. The
// text's first piece is counted apart (a normalizer may prepend to the
// text's start only).
func (t *Tokenizer) piece(p []byte, first bool) int {
	if n, ok := t.cache.get(p, first); ok {
		return n
	}
	n := t.encode(string(p), first)
	t.cache.put(string(p), first, n)
	return n
}

// Single is whether word, within a text (not at its start), is one token.
func (t *Tokenizer) Single(word string) bool { return t.encode(word, false) == 1 }

// encode counts the tokens of s.
func (t *Tokenizer) encode(s string, first bool) int {
	for _, n := range t.norm {
		s = n.normalize(s, first)
	}
	pieces := []string{s}
	for _, p := range t.pre {
		var next []string
		for _, s := range pieces {
			next = p.split(next, s, first)
		}
		pieces = next
	}
	n := 0
	for _, s := range pieces {
		n += t.bpe.count(s)
	}
	return n
}

// unsupported names a part this package does not read.
func unsupported(kind, typ string) error {
	return fmt.Errorf("its %s %q is not one hail reads (%s)", kind, typ, supported[kind])
}

var supported = map[string]string{
	"normalizer":    "Prepend, Replace, Lowercase, NFC, NFKC, Sequence",
	"pre_tokenizer": "ByteLevel, Split, Metaspace, Digits, Sequence",
	"model":         "BPE",
}

// typeOf reads a part's "type".
func typeOf(raw json.RawMessage) (string, error) {
	var t struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(raw, &t); err != nil {
		return "", err
	}
	return strings.TrimSpace(t.Type), nil
}
