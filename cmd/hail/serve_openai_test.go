package main

import (
	"bufio"
	"encoding/csv"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// hail serve --openai's bad settings: one line naming the flag, exit 1, no
// log file left behind.
func TestServeOpenAIMessages(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	log := filepath.Join(dir, "log.csv")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--slots", "4"}, "--slots applies to the mock inference server: add --openai"},
		{[]string{"serve", "--fault", "429:5"}, "--fault applies to the mock inference server"},
		{[]string{"serve", "--openai", "--itl", "fast"}, `--itl "fast" is not a duration`},
		{[]string{"serve", "--openai", "--itl", "gamma:1ms,2ms"}, `unknown distribution "gamma"`},
		{[]string{"serve", "--openai", "--fault", "boom:1"}, `--fault "boom:1": unknown fault`},
		{[]string{"serve", "--openai", "--fault", "stall:5"}, "a stall needs its length"},
		{[]string{"serve", "--openai", "--fault", "429:60", "--fault", "drop:50"}, "add up to 110%"},
		{[]string{"serve", "--openai", "--slots", "0"}, "--slots 0: at least 1"},
		{[]string{"serve", "--openai", "--tokens-per-chunk", "0"}, "--tokens-per-chunk 0"},
		{[]string{"serve", "--openai", "--eos", "101"}, "--eos 101"},
		{[]string{"serve", "--openai", "--tick", "-1ms"}, "--tick -1ms"},
		{[]string{"serve", "--openai", "--addr", "nonsense"}, "--addr nonsense"},
		{[]string{"serve", "--openai", "--request-log", filepath.Join(dir, "none", "log.csv")}, "--request-log:"},
		{[]string{"serve", "--openai", "--addr", "256.0.0.1:1", "--request-log", log}, "--addr 256.0.0.1:1"},
	} {
		stdout, stderr, code := hail(t, tc.args...)
		name := strings.Join(tc.args, " ")
		if code != 1 || stdout != "" || strings.Count(strings.TrimRight(stderr, "\n"), "\n") != 0 || !strings.HasPrefix(stderr, "hail: ") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 1 and one line", name, code, stdout, stderr)
		}
		if !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: %q lacks %q", name, stderr, tc.want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
}

// hail serve --openai serves streams until SIGTERM, then exits 0 with its
// request log complete.
func TestServeOpenAI(t *testing.T) {
	t.Parallel()
	log := filepath.Join(t.TempDir(), "log.csv")
	cmd := exec.Command(hailBin, "serve", "--openai", "--addr", "127.0.0.1:0", "--itl", "1ms", "--request-log", log, "--model", "m7")
	addr, stderr := startListening(t, cmd, "hail serve: mock OpenAI server on ")
	resp, err := http.Post("http://"+addr+"/v1/completions", "application/json", strings.NewReader(`{"prompt":"a b c","max_tokens":5,"stream":true}`))
	if err != nil {
		t.Fatalf("%v; stderr %s", err, stderr.String())
	}
	sc := bufio.NewScanner(resp.Body)
	var events []string
	for sc.Scan() {
		if l := sc.Text(); l != "" {
			events = append(events, l)
		}
	}
	resp.Body.Close()
	if len(events) != 6 || !strings.Contains(events[0], `"model":"m7"`) || events[5] != "data: [DONE]" {
		t.Fatalf("events %q", events)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v; stderr %s", err, stderr.All())
	}
	if !strings.Contains(stderr.All(), "mock OpenAI server on "+addr+" (model m7") {
		t.Errorf("stderr %q", stderr.All())
	}
	f, err := os.Open(log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) != 2 || recs[0][0] != "request" || recs[1][12] != "5" || recs[1][17] != "complete" {
		t.Fatalf("log %v, %v", recs, err)
	}
}
