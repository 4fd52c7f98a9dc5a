// Package tokenizer counts tokens as a model's Hugging Face tokenizer.json
// says (hail llm --tokenizer FILE): for the lengths of dataset prompts and
// replies, and to pick prompt words that are one token each.
//
// It reads byte-pair-encoding tokenizers, the kind of every model family
// served for chat and completion today: GPT-2 and GPT-4-style byte-level
// ones (Llama 3, Qwen 2 and 3, DeepSeek, Mistral's Tekken, GPT-NeoX,
// Falcon) and SentencePiece-style ones with byte fallback (Llama 2,
// Mistral 7B, Gemma). Its parts: the normalizers Prepend, Replace,
// Lowercase, NFC, NFKC and Sequence; the pre-tokenizers ByteLevel, Split
// (Isolated and Removed), Metaspace, Digits and Sequence; the BPE model
// with merges in either layout, byte_fallback and ignore_merges. Special
// (added) tokens are not matched in text: a prompt holds none. A
// tokenizer.json with another part is refused by name.
//
// Written here because no Go library serves: the Hugging Face tokenizers
// bindings for Go wrap the Rust library (cgo, a native build), and the one
// pure-Go port (sugarme/tokenizer) compiles the split patterns of current
// byte-level tokenizers with Go's regexp, which lacks their look-ahead
// (\s+(?!\S)) and panics, and writes to the home directory and the log
// when loading. Here that look-ahead is done by hand after Go's match
// (split.go).
//
// Counting is by pieces: a text is cut before every space (U+0020) that a
// non-space follows — where each supported pre-tokenizer cuts too, so the
// pieces' counts add up to the text's. A piece's count is computed once
// and kept in a lock-free table: counting a text of known pieces reads the
// table and allocates nothing.
package tokenizer
