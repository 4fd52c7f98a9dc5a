package llm

import (
	"time"

	"github.com/hail-loadgen/hail/internal/dataset"
	"github.com/hail-loadgen/hail/internal/engine"
	"github.com/hail-loadgen/hail/internal/http1"
)

// MultiTurn makes every connection a user holding conversations on the
// chat API, in the closed model: turn n+1 is sent when turn n's reply has
// ended (and the user has thought), carrying the conversation so far —
// each earlier user turn and its reply — truncated to MaxContext tokens by
// dropping the oldest turns. The replies in the history are the
// dataset's (ShareGPT's own assistant turns), or made-up words of the
// length asked for (random): what the server answered is not read back,
// so every run sends the same conversations.
type MultiTurn struct {
	// Turns is a made-up conversation's user turns (random dataset).
	Turns int
	// MaxContext bounds the tokens a request's messages hold (0: no
	// bound); the current user turn is sent whole even past it.
	MaxContext int
	// Think is a user's pause between a reply's end and its next turn.
	Think time.Duration
	// Users is the number of users (connections): user u's k-th
	// conversation is session k × Users + u, which picks its record (or
	// its words).
	Users int
}

// conversation is one user's conversation in progress: its turns as
// (user text, reply text) pairs of JSON string contents, with their
// tokens.
type conversation struct {
	user     int
	sessions uint64 // conversations begun
	turn, n  int    // the next user turn; user turns in all
	pairs    [][2][]byte
	tokens   [][2]int
	made     []byte   // a made-up conversation's words
	spans    [][4]int // their offsets in made
}

// NewUser returns the builder of user (connection) u of a multi-turn load.
func (s *Spec) NewUser(u int) *Builder {
	b := s.NewBuilder()
	b.conv = &conversation{user: u}
	if s.Data != nil && s.Data.Kind == dataset.ShareGPT && b.rd == nil {
		b.rd = s.Data.NewReader()
	}
	return b
}

// begin starts the user's next conversation.
func (b *Builder) begin() {
	s, c := b.s, b.conv
	g := c.sessions*uint64(max(s.Multi.Users, 1)) + uint64(c.user)
	c.sessions++
	c.pairs, c.tokens, c.turn = c.pairs[:0], c.tokens[:0], 0
	if d := s.Data; d != nil && d.Kind == dataset.ShareGPT {
		turns := b.rd.Turns(g)
		for i := 0; i+1 < len(turns); i++ {
			if turns[i].Human {
				c.pairs = append(c.pairs, [2][]byte{turns[i].Text, turns[i+1].Text})
				c.tokens = append(c.tokens, [2]int{b.rd.Count(turns[i].Text), max(b.rd.Count(turns[i+1].Text), 1)})
				i++
			}
		}
		c.n = len(c.pairs)
		return
	}
	salt := mix(s.Seed, 0x73656564)
	c.made, c.spans = c.made[:0], c.spans[:0]
	for k := range s.Multi.Turns {
		key := g<<10 | uint64(k)
		in, out := s.Input.At(key, saltIn^salt), s.Output.At(key, saltOut^salt)
		u0 := len(c.made)
		c.made = appendPrompt(c.made, s.words, in, key, saltPrompt^s.Seed)
		r0 := len(c.made)
		c.made = appendPrompt(c.made, s.words, out, key, saltReply^s.Seed)
		c.spans = append(c.spans, [4]int{u0, r0, r0, len(c.made)})
		c.tokens = append(c.tokens, [2]int{in, out})
	}
	for _, sp := range c.spans {
		c.pairs = append(c.pairs, [2][]byte{c.made[sp[0]:sp[1]], c.made[sp[2]:sp[3]]})
	}
	c.n = len(c.pairs)
}

// saltReply salts a made-up reply's words.
const saltReply = 0x7265706c79

// nextTurn builds request hit: the conversation's next turn.
func (b *Builder) nextTurn(hit uint64) {
	s, c := b.s, b.conv
	if c.turn >= c.n {
		b.begin()
	}
	// The oldest turns go while the history is over the bound.
	total := c.tokens[c.turn][0]
	for k := 0; k < c.turn; k++ {
		total += c.tokens[k][0] + c.tokens[k][1]
	}
	first := 0
	for m := s.Multi.MaxContext; m > 0 && total > m && first < c.turn; first++ {
		total -= c.tokens[first][0] + c.tokens[first][1]
	}
	out := c.tokens[c.turn][1]
	s.asked.put(hit, total, out)
	b.body = s.AppendTurns(b.body[:0], c.pairs[first:c.turn], c.pairs[c.turn][0], out)
}

// doneTurn ends a turn: the conversation goes on after a reply, and ends
// after a failure or its last turn.
func (b *Builder) doneTurn(p *http1.Parser) engine.Verdict {
	c := b.conv
	if p == nil || p.Status < 200 || p.Status > 299 {
		c.turn = c.n
	} else {
		c.turn++
	}
	return engine.Verdict{Think: b.s.Multi.Think}
}
