package llm

// What a caller that composes its own prompts needs (a scenario's llm
// steps: a prompt from a template, a conversation kept by the caller):
// the bodies hail llm's requests have, around the caller's text, and the
// made-up words hail llm's prompts and replies are made of.

// AppendPrompt appends the JSON body of a request whose prompt (or chat's
// one user message) is prompt, JSON-escaped text without its quotes,
// asking for out tokens, streamed, with usage.
func (s *Spec) AppendPrompt(dst, prompt []byte, out int) []byte {
	dst = s.openPrompt(dst)
	dst = append(dst, prompt...)
	return s.closePrompt(dst, out)
}

// AppendWords appends n made-up words (one token each: Counter's, else
// whitespace-separated), drawn from key: a prompt or a reply of n tokens,
// the same for the same key and seed.
func (s *Spec) AppendWords(dst []byte, n int, key uint64) []byte {
	return appendPrompt(dst, s.words, n, key, saltPrompt^s.Seed)
}

// AppendTurns appends the JSON body of a chat request: the user turns and
// their replies of turns (JSON-escaped texts, oldest first) and then the
// user turn current, asking for out tokens, streamed, with usage.
func (s *Spec) AppendTurns(dst []byte, turns [][2][]byte, current []byte, out int) []byte {
	dst = append(dst, `{"model":`...)
	dst = append(dst, s.model...)
	dst = append(dst, `,"messages":[`...)
	for _, t := range turns {
		dst = append(dst, `{"role":"user","content":"`...)
		dst = append(dst, t[0]...)
		dst = append(dst, `"},{"role":"assistant","content":"`...)
		dst = append(dst, t[1]...)
		dst = append(dst, `"},`...)
	}
	dst = append(dst, `{"role":"user","content":"`...)
	dst = append(dst, current...)
	dst = append(dst, `"}],"max_completion_tokens":`...)
	return s.appendTail(dst, out)
}

// Asked remembers the input and output lengths the last requests built
// asked for, by request number (lock-free; a number whose place another
// has taken since is forgotten): a stream's Expect when the caller builds
// the requests.
type Asked struct{ r ring }

// Put remembers request hit's lengths.
func (a *Asked) Put(hit uint64, in, out int) { a.r.put(hit, in, out) }

// Get is request hit's lengths, if they are still remembered.
func (a *Asked) Get(hit uint64) (in, out int, ok bool) { return a.r.get(hit) }
