// Package dataset holds what hail llm's requests ask when they do not
// make their prompts up: a JSON Lines file of prompts or chats, a ShareGPT
// file of conversations, an Azure LLM inference trace (which also says
// when each request arrives), or a synthetic set whose prompts share
// prefixes in groups (for prefix caches and cache-aware routers). The
// random synthetic load of package llm needs no dataset.
//
// Files are not loaded: each is mapped read-only and indexed once, 8 bytes
// (an offset) per usable record, so a gigabyte of records costs the
// process its index and the pages the kernel keeps in its cache. Records
// are read in place when their request is built; a prompt is copied into
// the request as the JSON string the file holds, without decoding it.
// Request hit takes record Index(hit): a seeded permutation of the records
// (sampling without replacement; each pass over the file a new one), the
// file's order, or independent draws (with replacement) — a pure function
// of the request's number, so reruns and the shards of one run agree.
//
// Token counts of a record's text come from a Counter: by default its
// whitespace-separated pieces (what hail's prompts are made of and what
// hail serve --openai counts); package tokenizer's exact counts with a
// model's tokenizer.json.
package dataset
