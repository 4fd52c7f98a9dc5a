// Package llmservetest reads the request log of the mock inference server
// (hail serve --openai --log), for tests that check hail against it.
package llmservetest

import (
	"encoding/csv"
	"os"
	"strconv"
	"testing"
)

// Request is one line of the mock's CSV request log; times are Unix ns.
type Request struct {
	// Arrival is the request's arrival (the kernel's receive time when
	// Kernel), Admit when it got a batch slot, First its first token's
	// send and End its stream's end.
	Arrival, Admit, First, End int64
	// Kernel says Arrival is the kernel's receive time.
	Kernel bool
	// Outcome is how the request ended ("complete", "client_gone", …).
	Outcome string
	// Tokens is the tokens sent; Prompt the prompt's tokens; MaxTokens
	// the request's max_tokens.
	Tokens, Prompt, MaxTokens int
}

// ReadLog reads the log at path by its header's column names, failing tb
// on a log it cannot read.
func ReadLog(tb testing.TB, path string) []Request {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) == 0 {
		tb.Fatalf("request log: %v", err)
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	num := func(row []string, name string) int64 {
		v, err := strconv.ParseInt(row[col[name]], 10, 64)
		if err != nil {
			tb.Fatalf("request log %s %q: %v", name, row[col[name]], err)
		}
		return v
	}
	var out []Request
	for _, row := range rows[1:] {
		out = append(out, Request{Arrival: num(row, "arrival_ns"), Admit: num(row, "admit_ns"), First: num(row, "first_token_ns"),
			End: num(row, "end_ns"), Kernel: row[col["arrival_clock"]] == "kernel", Outcome: row[col["outcome"]],
			Tokens: int(num(row, "tokens_sent")), Prompt: int(num(row, "prompt_tokens")), MaxTokens: int(num(row, "max_tokens"))})
	}
	return out
}
