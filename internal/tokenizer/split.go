package tokenizer

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// preTokenizer splits a piece of text into the pieces BPE encodes apart;
// first says the piece starts the text.
type preTokenizer interface {
	split(dst []string, s string, first bool) []string
}

// gpt2Pattern is GPT-2's split pattern (ByteLevel's when use_regex).
const gpt2Pattern = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`

// splitter splits at a regular expression's matches. Go's regexp has no
// look-ahead; the one every byte-level pattern uses, \s+(?!\S) — a run of
// whitespace that no non-space follows, so that the last space before a
// word goes with the word — is matched as \s+ and then, when a non-space
// follows the run, shortened by its last character.
type splitter struct {
	re        *regexp.Regexp
	lookahead bool
	removed   bool // the matches are dropped (Removed), not kept (Isolated)
}

// lookaheadAlt is the look-ahead alternative a pattern may hold.
const lookaheadAlt = `\s+(?!\S)`

// newSplitter compiles a split pattern.
func newSplitter(pat string, removed bool) (*splitter, error) {
	s := &splitter{removed: removed}
	if strings.Contains(pat, lookaheadAlt) {
		s.lookahead = true
		pat = strings.ReplaceAll(pat, lookaheadAlt+`|\s+`, `\s+`)
		pat = strings.ReplaceAll(pat, lookaheadAlt, `\s+`)
	}
	if strings.Contains(pat, "(?=") || strings.Contains(pat, "(?!") || strings.Contains(pat, "(?<") {
		return nil, fmt.Errorf("its split pattern %q has a look-around other than %s, which hail cannot match", pat, lookaheadAlt)
	}
	re, err := regexp.Compile(pat)
	if err != nil {
		return nil, fmt.Errorf("its split pattern: %v", err)
	}
	s.re = re
	return s, nil
}

func (sp *splitter) split(dst []string, s string, _ bool) []string {
	gap := 0 // the start of text not yet in a piece
	for pos := 0; pos < len(s); {
		m := sp.re.FindStringIndex(s[pos:])
		if m == nil {
			break
		}
		a, b := pos+m[0], pos+m[1]
		if a == b { // an empty match: no piece; look again a character on
			if a >= len(s) {
				break
			}
			_, n := utf8.DecodeRuneInString(s[a:])
			pos = a + n
			continue
		}
		if sp.lookahead && b < len(s) && allSpace(s[a:b]) {
			if r, _ := utf8.DecodeRuneInString(s[b:]); !unicode.IsSpace(r) {
				if _, n := utf8.DecodeLastRuneInString(s[a:b]); b-a > n {
					b -= n
				}
			}
		}
		if a > gap {
			dst = append(dst, s[gap:a])
		}
		if !sp.removed {
			dst = append(dst, s[a:b])
		}
		gap, pos = b, b
	}
	if gap < len(s) {
		dst = append(dst, s[gap:])
	}
	return dst
}

// allSpace is whether s is all whitespace.
func allSpace(s string) bool {
	for _, r := range s {
		if !unicode.IsSpace(r) {
			return false
		}
	}
	return true
}

// byteLevel maps every byte to GPT-2's printable character for it, after
// an optional split with GPT-2's pattern and an optional space before the
// text.
type byteLevel struct {
	prefixSpace bool
	re          *splitter
}

func (bl byteLevel) split(dst []string, s string, first bool) []string {
	if bl.prefixSpace && first && !strings.HasPrefix(s, " ") {
		s = " " + s
	}
	start := len(dst)
	if bl.re != nil {
		dst = bl.re.split(dst, s, first)
	} else {
		dst = append(dst, s)
	}
	for i := start; i < len(dst); i++ {
		var b strings.Builder
		for _, c := range []byte(dst[i]) {
			b.WriteRune(byteRune[c])
		}
		dst[i] = b.String()
	}
	return dst
}

// byteRune is GPT-2's bytes_to_unicode: printable bytes stand for
// themselves, the others for the characters from U+0100 up, in order.
var byteRune = func() (m [256]rune) {
	n := 0
	for b := 0; b < 256; b++ {
		if b >= '!' && b <= '~' || b >= 0xa1 && b <= 0xac || b >= 0xae {
			m[b] = rune(b)
		} else {
			m[b] = rune(256 + n)
			n++
		}
	}
	return m
}()

// metaspace replaces spaces with a visible character (▁), prepends one,
// and splits before each.
type metaspace struct {
	repl    string
	prepend string // "always", "first" or "never"
	splits  bool
}

func (m metaspace) split(dst []string, s string, first bool) []string {
	if s == "" {
		return dst
	}
	s = strings.ReplaceAll(s, " ", m.repl)
	if (m.prepend == "always" || m.prepend == "first" && first) && !strings.HasPrefix(s, m.repl) {
		s = m.repl + s
	}
	if !m.splits || s == "" {
		return append(dst, s)
	}
	start := 0
	for i := 1; i < len(s); {
		j := strings.Index(s[i:], m.repl)
		if j < 0 {
			break
		}
		k := i + j
		dst = append(dst, s[start:k])
		start, i = k, k+len(m.repl)
	}
	return append(dst, s[start:])
}

// digits splits digits from the rest: each digit alone, or runs of them.
type digits struct{ individual bool }

func (d digits) split(dst []string, s string, _ bool) []string {
	start, prev := 0, -1
	for i, r := range s {
		kind := 0
		if unicode.IsDigit(r) {
			kind = 1
		}
		if i > start && (kind != prev || kind == 1 && d.individual) {
			dst = append(dst, s[start:i])
			start = i
		}
		prev = kind
	}
	if start < len(s) {
		dst = append(dst, s[start:])
	}
	return dst
}

// sequence applies pre-tokenizers in turn.
type sequence []preTokenizer

func (q sequence) split(dst []string, s string, first bool) []string {
	pieces := []string{s}
	for _, p := range q {
		var next []string
		for _, s := range pieces {
			next = p.split(next, s, first)
		}
		pieces = next
	}
	return append(dst, pieces...)
}

// parsePreTokenizer reads the "pre_tokenizer" part (null: none).
func parsePreTokenizer(raw json.RawMessage) ([]preTokenizer, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	p, err := onePreTokenizer(raw)
	if err != nil {
		return nil, err
	}
	return []preTokenizer{p}, nil
}

func onePreTokenizer(raw json.RawMessage) (preTokenizer, error) {
	typ, err := typeOf(raw)
	if err != nil {
		return nil, fmt.Errorf("its pre_tokenizer: %v", err)
	}
	bad := func(err error) (preTokenizer, error) {
		return nil, fmt.Errorf("its pre_tokenizer %s: %v", typ, err)
	}
	switch typ {
	case "Sequence":
		var seq struct {
			PreTokenizers []json.RawMessage `json:"pretokenizers"`
		}
		if err := json.Unmarshal(raw, &seq); err != nil {
			return bad(err)
		}
		var q sequence
		for _, r := range seq.PreTokenizers {
			p, err := onePreTokenizer(r)
			if err != nil {
				return nil, err
			}
			q = append(q, p)
		}
		return q, nil
	case "ByteLevel":
		bl := struct {
			AddPrefixSpace bool  `json:"add_prefix_space"`
			UseRegex       *bool `json:"use_regex"`
		}{}
		if err := json.Unmarshal(raw, &bl); err != nil {
			return bad(err)
		}
		p := byteLevel{prefixSpace: bl.AddPrefixSpace}
		if bl.UseRegex == nil || *bl.UseRegex {
			p.re, _ = newSplitter(gpt2Pattern, false)
		}
		return p, nil
	case "Split":
		var sp struct {
			Pattern  pattern `json:"pattern"`
			Behavior string  `json:"behavior"`
			Invert   bool    `json:"invert"`
		}
		if err := json.Unmarshal(raw, &sp); err != nil {
			return bad(err)
		}
		if sp.Invert || sp.Behavior != "Isolated" && sp.Behavior != "Removed" {
			return bad(fmt.Errorf("behavior %q (invert %v): hail reads Isolated and Removed, not inverted", sp.Behavior, sp.Invert))
		}
		pat := ""
		switch {
		case sp.Pattern.Regex != nil:
			pat = *sp.Pattern.Regex
		case sp.Pattern.String != nil:
			pat = regexp.QuoteMeta(*sp.Pattern.String)
		default:
			return bad(fmt.Errorf("no pattern"))
		}
		s, err := newSplitter(pat, sp.Behavior == "Removed")
		if err != nil {
			return nil, err
		}
		return s, nil
	case "Metaspace":
		m := struct {
			Replacement    string `json:"replacement"`
			PrependScheme  string `json:"prepend_scheme"`
			AddPrefixSpace *bool  `json:"add_prefix_space"`
			Split          *bool  `json:"split"`
		}{}
		if err := json.Unmarshal(raw, &m); err != nil {
			return bad(err)
		}
		p := metaspace{repl: m.Replacement, prepend: m.PrependScheme, splits: m.Split == nil || *m.Split}
		if p.repl == "" {
			p.repl = "▁"
		}
		if p.prepend == "" {
			p.prepend = "always"
			if m.AddPrefixSpace != nil && !*m.AddPrefixSpace {
				p.prepend = "never"
			}
		}
		if p.prepend != "always" && p.prepend != "first" && p.prepend != "never" {
			return bad(fmt.Errorf("prepend_scheme %q", p.prepend))
		}
		return p, nil
	case "Digits":
		var d struct {
			Individual bool `json:"individual_digits"`
		}
		if err := json.Unmarshal(raw, &d); err != nil {
			return bad(err)
		}
		return digits{d.Individual}, nil
	}
	return nil, unsupported("pre_tokenizer", typ)
}
