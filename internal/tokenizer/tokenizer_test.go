package tokenizer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func load(t testing.TB, name string) *Tokenizer {
	t.Helper()
	tok, err := Load(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// The counts below are worked by hand from each file's merges (their
// steps are in the comments), as Hugging Face's tokenizers encodes.
func TestCount(t *testing.T) {
	t.Parallel()
	cases := []struct {
		file, text string
		want       int
	}{
		// "the" → t h e → t he; " world" → Ġ w o r l d → Ġw … → Ġworld.
		{"gpt2.json", "the world", 3},
		// " the", " ", " the": the last space of a run goes with the word.
		{"gpt2.json", " the  the", 3},
		// hello → he l l o (4); \n, \n (one each: a space run before a
		// word leaves its last character); world → w or ld (3).
		{"gpt2.json", "hello\n\nworld", 9},
		// é is two bytes, each a character of its own.
		{"gpt2.json", " é", 3},
		{"gpt2.json", "", 0},
		// cl100k's pattern: say (3), " hello" (in the vocabulary, ignore_merges),
		// " " alone before digits, 123 and 45 (a digit each).
		{"llama3.json", "say hello 12345", 10},
		{"llama3.json", "the world", 3},
		// ▁the, ▁world.
		{"llama2.json", "the world", 2},
		// é is not in the vocabulary: its two bytes' <0xC3> <0xA9>.
		{"llama2.json", "the é", 4},
		// Prepend makes "▁▁the": ▁ and ▁the.
		{"llama2.json", " the", 2},
		{"metaspace.json", "the world", 2},
		{"metaspace.json", "the é", 4},
	}
	for _, c := range cases {
		tok := load(t, c.file)
		for range 2 { // computed, then from the table
			if got := tok.Count([]byte(c.text)); got != c.want {
				t.Errorf("%s %q: %d tokens, want %d", c.file, c.text, got, c.want)
			}
		}
	}
	if tok := load(t, "gpt2.json"); !tok.Single(" the") || !tok.Single(" world") || tok.Single(" hello") {
		t.Error("Single")
	}
}

// Counting known pieces allocates nothing.
func TestCountAllocations(t *testing.T) {
	tok := load(t, "llama3.json")
	text := []byte("the world say hello the world 12345 the\n\nworld")
	want := tok.Count(text)
	if a := testing.AllocsPerRun(100, func() {
		if tok.Count(text) != want {
			t.Fatal("count changed")
		}
	}); a != 0 {
		t.Errorf("%v allocations per count", a)
	}
}

func TestLoadErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cases := map[string]string{
		`[`:  "not a tokenizer.json",
		`{}`: `no "model"`,
		`{"model": {"type": "Unigram", "vocab": []}}`:                                                                                                `its model "Unigram" is not one hail reads (BPE)`,
		`{"model": {"type": "BPE", "vocab": {}, "merges": []}}`:                                                                                      "no vocabulary",
		`{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["ab"]}}`:                                                                            `merge 1 "ab" is not two tokens`,
		`{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [3]}}`:                                                                               "merge 1 3 is neither",
		`{"normalizer": {"type": "BertNormalizer"}, "model": {"type": "BPE", "vocab": {"a": 0}}}`:                                                    `normalizer "BertNormalizer"`,
		`{"pre_tokenizer": {"type": "Whitespace"}, "model": {"type": "BPE", "vocab": {"a": 0}}}`:                                                     `pre_tokenizer "Whitespace"`,
		`{"pre_tokenizer": {"type": "Split", "pattern": {"Regex": "a(?=b)"}, "behavior": "Isolated"}, "model": {"type": "BPE", "vocab": {"a": 0}}}`:  "look-around",
		`{"pre_tokenizer": {"type": "Split", "pattern": {"Regex": "a"}, "behavior": "MergedWithNext"}, "model": {"type": "BPE", "vocab": {"a": 0}}}`: "Isolated and Removed",
		`{"model": {"type": "BPE", "vocab": {"a": 0}, "continuing_subword_prefix": "##"}}`:                                                           "subword prefix",
	}
	for content, want := range cases {
		p := filepath.Join(dir, "t.json")
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(p); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v, want %q", content, err, want)
		}
	}
	if _, err := Load(filepath.Join(dir, "none.json")); err == nil {
		t.Error("a missing file loads")
	}
}

// Cutting a text into pieces changes no count: the pieces' counts add up
// to the text's encoded whole.
func TestPiecesAddUp(t *testing.T) {
	t.Parallel()
	texts := []string{"the world", "  the   world  ", "a\tb \n c", "x 1 22 333 4444", "don't stop", " the\n the", "é è ü the"}
	for _, f := range []string{"gpt2.json", "llama3.json", "llama2.json", "metaspace.json"} {
		tok := load(t, f)
		for _, s := range texts {
			if got, whole := tok.Count([]byte(s)), tok.encode(s, true); got != whole {
				t.Errorf("%s %q: %d by pieces, %d whole", f, s, got, whole)
			}
		}
	}
}

// FuzzCount counts any text with each tokenizer: never a panic, and the
// pieces add up to the whole.
func FuzzCount(f *testing.F) {
	for _, s := range []string{"the world", " the  the", "hello\n\nworld", "say hello 12345", "é", "\xff\xfe", "  \t "} {
		f.Add(s)
	}
	toks := []*Tokenizer{load(f, "gpt2.json"), load(f, "llama3.json"), load(f, "llama2.json"), load(f, "metaspace.json")}
	f.Fuzz(func(t *testing.T, s string) {
		for i, tok := range toks {
			if got, whole := tok.Count([]byte(s)), tok.encode(s, true); got != whole {
				t.Fatalf("tokenizer %d %q: %d by pieces, %d whole", i, s, got, whole)
			}
		}
	})
}

// FuzzParse reads any tokenizer.json: an error or a tokenizer, never a
// panic.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"gpt2.json", "llama3.json", "llama2.json", "metaspace.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		tok, err := Parse(b)
		if err != nil {
			return
		}
		tok.Count([]byte("the world, say hello 123 \n\n é"))
	})
}
