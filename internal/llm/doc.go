// Package llm builds the requests of hail llm: OpenAI-compatible streaming
// completions (/v1/completions) and chat completions (/v1/chat/completions)
// whose prompts have a target number of tokens and which ask for an exact
// number of output tokens, each a pure function of the request's number
// (reproducible, and the same in every shard of a run). What the responses
// measured is package stream's and report's; docs/llm.md defines it.
package llm
