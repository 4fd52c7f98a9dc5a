// Package reqgen builds the requests of a run without a scenario file as oha
// does: to the URL, to a random URL of a list (--urls-from-file) or to URLs
// generated from a regular expression (--rand-regex-url); with the body, or
// a random line of a file per request (-Z); optionally signed with AWS
// Signature Version 4 (--aws-sigv4). It also builds curl's multipart forms
// (-F).
//
// Every choice is a pure function of the run's seed and the request number
// (the hit a schedule.Source hands out), so the per-request log can name the
// URL of each request afterwards (Gen.AppendURL) from the record's Hit,
// without engines carrying URLs.
package reqgen

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"math/bits"
	"net/url"

	"github.com/hail-loadgen/hail/internal/engine"
	"github.com/hail-loadgen/hail/internal/http1"
	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/random"
	"github.com/hail-loadgen/hail/internal/run"
)

// preLimit bounds how many (URL, body) variants are encoded before the run;
// beyond it (a long URL list times many bodies) requests are assembled as
// they are sent, from the pre-encoded head and tail of each body's request.
const preLimit = 4096

// Gen generates a run's requests. It is immutable once built and safe for
// concurrent use; each worker gets its own builder from Workload.
type Gen struct {
	specs  []http1.RequestSpec // the plan's, one per body
	url    *url.URL            // the plan's URL (a URL of the set, with one)
	urls   *URLSet             // nil: the plan's URL only
	prefix string              // "scheme://host" before each target for a forward proxy, else ""
	heads  [][2][]byte         // per body: the request up to the target, and after it
	pre    [][]byte            // pre-encoded variants, target-major; nil: assembled per request
	hashes []string            // per body: hex SHA-256, for signing
	sign   *SigV4
	seed   uint64
	head   bool
	split  bool // a body of engine.SplitAt or more is sent apart (builder.Body)
}

// New returns the generator of p's requests: to the URLs of urls (nil: p's
// URL), signed with sign (nil: unsigned), the random choices drawn from
// seed.
func New(p *plan.Plan, urls *URLSet, sign *SigV4, seed uint64) *Gen {
	g := &Gen{specs: p.Specs(), url: p.URL, urls: urls, sign: sign, seed: seed}
	g.head = g.specs[0].Method == "HEAD"
	if t := g.specs[0].Target; len(t) > 0 && t[0] != '/' && t != "*" {
		g.prefix = p.URL.Scheme + "://" + p.URL.Host // absolute form for a forward proxy
	}
	for _, s := range g.specs {
		s.Target = "/"
		enc := http1.AppendHead(nil, &s) // a large body is shared (Body), never copied into requests
		if len(s.Body) < engine.SplitAt {
			enc = append(enc, s.Body...)
		} else {
			g.split = true
		}
		line := bytes.IndexByte(enc, '\n') + 1
		proto := bytes.LastIndexByte(enc[:line], ' ')
		g.heads = append(g.heads, [2][]byte{[]byte(s.Method + " "), enc[proto:]})
		sum := sha256.Sum256(s.Body)
		g.hashes = append(g.hashes, hex.EncodeToString(sum[:]))
	}
	if urls != nil && urls.gen == nil && sign == nil && len(urls.targets)*len(g.specs) <= preLimit {
		for _, t := range urls.targets {
			for b := range g.specs {
				g.pre = append(g.pre, g.assemble(nil, b, []byte(t)))
			}
		}
	}
	if urls == nil && sign == nil {
		for b := range g.specs {
			g.pre = append(g.pre, g.assemble(nil, b, []byte(p.URL.RequestURI())))
		}
	}
	return g
}

// Plain reports whether the run's requests are the plan's own, sent in
// turn: one URL, one body, no signing. run.Run sends those itself
// (engine.Static) and needs no Workload.
func (g *Gen) Plain() bool { return g.urls == nil && g.sign == nil && len(g.specs) == 1 }

// Workload sends the generated requests as one unnamed step.
func (g *Gen) Workload() *run.Workload {
	return &run.Workload{Steps: []string{""}, NewRequests: func(int) engine.Requests { return g.NewBuilder() }}
}

// NewBuilder returns a builder of the run's requests for one worker.
func (g *Gen) NewBuilder() engine.Requests {
	b := &builder{g: g}
	if g.sign != nil {
		b.cache = new(signCache)
	}
	return b
}

// choice is what a request number chose.
type choice struct {
	x      uint64 // the request's random bits (seed of a generated URL)
	target int    // index into the URL list
	body   int    // index into the bodies
}

// choose draws request hit's URL and body.
func (g *Gen) choose(hit uint64) choice {
	c := choice{x: mix64(g.seed ^ mix64(hit))}
	if n := len(g.specs); n > 1 {
		c.body = pick(mix64(c.x), n)
	}
	if g.urls != nil && g.urls.gen == nil {
		c.target = pick(c.x, len(g.urls.targets))
	}
	return c
}

// appendTarget appends request c's target (origin form, without the proxy
// prefix) to dst.
func (g *Gen) appendTarget(dst []byte, c choice) []byte {
	switch {
	case g.urls == nil:
		return append(dst, g.url.RequestURI()...)
	case g.urls.gen == nil:
		return append(dst, g.urls.targets[c.target]...)
	}
	r := *random.New(c.x)
	start := len(dst)
	dst = g.urls.gen.AppendTo(dst, &r)
	// Keep the path and query of the generated URL (its origin is the run's).
	gen := dst[start:]
	if i := bytes.Index(gen, []byte("://")); i >= 0 {
		j := bytes.IndexAny(gen[i+3:], "/?")
		if j < 0 {
			dst = dst[:start]
		} else {
			n := copy(gen, gen[i+3+j:])
			dst = dst[:start+n]
		}
	}
	if len(dst) == start || dst[start] != '/' {
		dst = append(dst, 0)
		copy(dst[start+1:], dst[start:])
		dst[start] = '/'
	}
	return escapeTarget(dst, start)
}

// escapeTarget percent-encodes the bytes of dst[start:] that may not appear
// in a request target: controls, space and non-ASCII.
func escapeTarget(dst []byte, start int) []byte {
	const hex = "0123456789ABCDEF"
	bad := 0
	for _, c := range dst[start:] {
		if c <= 0x20 || c >= 0x7f {
			bad++
		}
	}
	if bad == 0 {
		return dst
	}
	n := len(dst)
	dst = append(dst, make([]byte, 2*bad)...)
	w := len(dst)
	for i := n - 1; i >= start; i-- {
		c := dst[i]
		if c <= 0x20 || c >= 0x7f {
			w -= 3
			dst[w], dst[w+1], dst[w+2] = '%', hex[c>>4], hex[c&15]
		} else {
			w--
			dst[w] = c
		}
	}
	return dst
}

// assemble appends the request of body b to target (origin form) to dst.
func (g *Gen) assemble(dst []byte, b int, target []byte) []byte {
	h := g.heads[b]
	dst = append(dst, h[0]...)
	dst = append(dst, g.prefix...)
	dst = append(dst, target...)
	return append(dst, h[1]...)
}

// AppendURL appends the URL of request number hit to dst: the URL the
// request went to, whichever worker sent it. It is safe for concurrent use.
func (g *Gen) AppendURL(dst []byte, hit uint64) []byte {
	if g.urls == nil {
		return append(dst, g.url.String()...)
	}
	o := g.urls.origin
	dst = append(dst, o.Scheme...)
	dst = append(dst, "://"...)
	dst = append(dst, o.Host...)
	return g.appendTarget(dst, g.choose(hit))
}

// Dump writes the URLs of the first n requests, one per line (--dump-urls).
func (g *Gen) Dump(w io.Writer, n int) error {
	var b []byte
	for hit := range uint64(n) {
		b = append(g.AppendURL(b, hit), '\n')
		if len(b) > 32<<10 {
			if _, err := w.Write(b); err != nil {
				return err
			}
			b = b[:0]
		}
	}
	_, err := w.Write(b)
	return err
}

// Pattern is what the run's URLs are made from, for reports and
// comparisons: the URL, the file of URLs or the regular expression.
func (g *Gen) Pattern() string {
	if g.urls == nil {
		return g.url.String()
	}
	return g.urls.pattern
}

// builder is one worker's engine.Requests. Next allocates nothing unless a
// request must be signed (once a second per variant with --aws-sigv4, every
// request with generated URLs and signing).
type builder struct {
	g     *Gen
	tgt   []byte // the current request's target
	buf   []byte // the current request, when assembled
	cache *signCache
}

// Next implements engine.Requests.
func (b *builder) Next(hit uint64) ([]byte, int, bool, bool) {
	g := b.g
	c := g.choose(hit)
	if g.pre != nil {
		return g.pre[c.target*len(g.specs)+c.body], 0, g.head, true
	}
	b.tgt = g.appendTarget(b.tgt[:0], c)
	if g.sign == nil {
		b.buf = g.assemble(b.buf[:0], c.body, b.tgt)
		return b.buf, 0, g.head, true
	}
	return b.signed(c), 0, g.head, true
}

// Done implements engine.Requests.
func (b *builder) Done(int, *http1.Parser) engine.Verdict { return engine.Verdict{} }

// Body implements engine.SharedBody: a body of engine.SplitAt or more
// follows its request's head from where it is.
func (b *builder) Body(hit uint64, _ int) []byte {
	if !b.g.split {
		return nil
	}
	if body := b.g.specs[b.g.choose(hit).body].Body; len(body) >= engine.SplitAt {
		return body
	}
	return nil
}

// mix64 is the SplitMix64 finalizer: a request number and the seed become
// well-spread random bits.
func mix64(x uint64) uint64 {
	x += 0x9E3779B97F4A7C15
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9
	x = (x ^ (x >> 27)) * 0x94D049BB133111EB
	return x ^ (x >> 31)
}

// pick maps random bits to [0, n) (Lemire's multiply method).
func pick(x uint64, n int) int {
	hi, _ := bits.Mul64(x, uint64(n))
	return int(hi)
}
