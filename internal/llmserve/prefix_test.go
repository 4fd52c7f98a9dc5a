package llmserve

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// words is n distinct words starting at k.
func words(k, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, " w%d", k+i)
	}
	return b.String()
}

// A prompt's leading blocks that an earlier prompt had are found in the
// prefix cache: not prefilled again (the first token comes sooner), and
// logged and counted as hits; a chat's messages are one prompt; a cache
// too small for both prompts evicts the older's blocks. A token's prefill
// is 1 ms, so the cached prompt's first token comes 32 ms sooner (with 200
// µs, 6.4 ms sooner, the race tier's load once made it 1.5 ms later).
func TestPrefixCache(t *testing.T) {
	t.Parallel()
	const perToken = time.Millisecond
	ts := startServer(t, Config{PrefixCacheTokens: 1 << 10, PrefillPerToken: perToken, Slots: 4})
	prefix := words(0, 40) // two whole blocks and 8 tokens
	send := func(body string) {
		if r := rawRequest(t, ts.addr, "/v1/completions", body); r.status != 200 {
			t.Fatalf("status %d", r.status)
		}
	}
	prompt := func(p string) string {
		b, _ := json.Marshal(map[string]any{"prompt": p, "max_tokens": 1})
		return string(b)
	}
	send(prompt(prefix + words(100, 10)))
	send(prompt(prefix + words(200, 10)))
	send(prompt(words(300, 50)))
	chat, _ := json.Marshal(map[string]any{"max_tokens": 1, "messages": []map[string]string{{"role": "system", "content": words(0, 20)}, {"role": "user", "content": words(20, 20) + words(400, 3)}}})
	if r := rawRequest(t, ts.addr, "/v1/chat/completions", string(chat)); r.status != 200 {
		t.Fatalf("chat: status %d", r.status)
	}
	log := ts.lines(t, 4)
	for id, want := range map[int64]int64{1: 0, 2: 32, 3: 0, 4: 32} {
		l := log[id]
		if got := l.int("cached_tokens"); got != want {
			t.Errorf("request %d: %d cached tokens, want %d", id, got, want)
		}
		prefill := time.Duration(l.int("first_token_ns") - l.int("admit_ns"))
		if uncached := time.Duration(l.int("prompt_tokens")-want) * perToken; prefill < uncached {
			t.Errorf("request %d: first token %v after its slot, its uncached prefill is %v", id, prefill, uncached)
		}
	}
	if first, second := log[1].int("first_token_ns")-log[1].int("admit_ns"), log[2].int("first_token_ns")-log[2].int("admit_ns"); second >= first {
		t.Errorf("the cached prompt's first token took %v, the uncached one's %v", time.Duration(second), time.Duration(first))
	}
	st := ts.Stats()
	if st.PrefixHitTokens != 64 || st.PrefixQueriedTokens != 50+50+50+43 {
		t.Errorf("stats: %d hit of %d queried tokens", st.PrefixHitTokens, st.PrefixQueriedTokens)
	}

	// 32 tokens of cache: the third prompt's blocks evict the first's.
	small := startServer(t, Config{PrefixCacheTokens: 32, Slots: 1})
	small2 := func(p string) {
		if r := rawRequest(t, small.addr, "/v1/completions", prompt(p)); r.status != 200 {
			t.Fatalf("status %d", r.status)
		}
	}
	small2(words(0, 32))
	small2(words(500, 32))
	small2(words(0, 32))
	if got := small.lines(t, 3)[3].int("cached_tokens"); got != 0 {
		t.Errorf("after eviction: %d cached tokens", got)
	}
}

func TestPrefixHasher(t *testing.T) {
	t.Parallel()
	hash := func(parts ...string) []uint64 {
		h := &prefixHasher{}
		for _, p := range parts {
			h.hash(p)
		}
		return h.blocks
	}
	a := hash(words(0, 40))
	if len(a) != 2 {
		t.Fatalf("%d blocks of 40 tokens", len(a))
	}
	if b := hash(words(0, 20), "\n\t"+words(20, 20)); len(b) != 2 || b[0] != a[0] || b[1] != a[1] {
		t.Error("the same tokens, spaced and split otherwise, hash otherwise")
	}
	if c := hash(words(1, 40)); c[0] == a[0] || c[1] == a[1] {
		t.Error("other tokens hash the same")
	}
	if d := hash(" w0w1" + words(2, 38)); d[0] == a[0] {
		t.Error("tokens joined hash as apart")
	}
	var nilHasher *prefixHasher
	nilHasher.hash("no cache")
}
