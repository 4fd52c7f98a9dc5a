package scenario

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"

	"hail/internal/engine"
	"hail/internal/http1"
	"hail/internal/run"
)

// URLSet is oha's --urls-from-file (one URL per line, a random one per
// request) or --rand-regex-url (each URL generated from a regular
// expression), for runs without a scenario file. Every URL must share one
// origin (scheme, host and port): hail connects to one origin per run.
type URLSet struct {
	origin  *url.URL
	first   string   // a URL of the set, for the plan
	targets []string // --urls-from-file: the request targets
	gen     *RegexGen
	prefix  string // --rand-regex-url: the generated origin, checked on samples
}

// LoadURLs reads --urls-from-file: one URL per line; blank lines are skipped.
func LoadURLs(path string) (*URLSet, error) {
	f, err := os.Open(path)
	if err != nil {
		if pe, ok := err.(*os.PathError); ok {
			err = pe.Err
		}
		return nil, fmt.Errorf("--urls-from-file %s: %v", path, err)
	}
	defer f.Close()
	set := &URLSet{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		raw := strings.TrimSpace(sc.Text())
		if raw == "" {
			continue
		}
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("--urls-from-file %s:%d: expected an http:// or https:// URL, found %q", path, line, raw)
		}
		if set.origin == nil {
			set.origin, set.first = &url.URL{Scheme: u.Scheme, Host: u.Host}, raw
		} else if u.Scheme != set.origin.Scheme || u.Host != set.origin.Host {
			return nil, fmt.Errorf("--urls-from-file %s:%d: expected the origin %s://%s of the first URL (hail connects to one origin per run), found %s://%s",
				path, line, set.origin.Scheme, set.origin.Host, u.Scheme, u.Host)
		}
		set.targets = append(set.targets, u.RequestURI())
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("--urls-from-file %s: %v", path, err)
	}
	if len(set.targets) == 0 {
		return nil, fmt.Errorf("--urls-from-file %s: expected one URL per line, found none", path)
	}
	return set, nil
}

// RegexURLs compiles --rand-regex-url: as oha does, every '.' of pattern is
// a literal dot, and x*, x+ and x{n,} repeat at most maxRepeat extra times.
func RegexURLs(pattern string, maxRepeat int) (*URLSet, error) {
	g, err := CompileRegexGen(escapeDots(pattern), maxRepeat)
	if err != nil {
		return nil, fmt.Errorf("--rand-regex-url: %v", err)
	}
	set := &URLSet{gen: g}
	r := NewRand(randomSeed())
	for i := range 200 {
		s := g.String(r)
		origin, _ := splitURL(s)
		u, err := url.Parse(origin)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("--rand-regex-url %s: generated %q, which is not an http:// or https:// URL", pattern, s)
		}
		if i == 0 {
			set.origin, set.first, set.prefix = &url.URL{Scheme: u.Scheme, Host: u.Host}, s, origin
		} else if origin != set.prefix {
			return nil, fmt.Errorf("--rand-regex-url %s: the scheme, host and port must not vary (hail connects to one origin per run): generated %s and %s", pattern, set.prefix, origin)
		}
	}
	return set, nil
}

// First is a URL of the set: the plan's URL (its origin is the run's).
func (u *URLSet) First() string { return u.first }

// Dump writes n URLs of the set, one per line (--dump-urls).
func (u *URLSet) Dump(w io.Writer, n int) error {
	r := NewRand(randomSeed())
	var b []byte
	for range n {
		if u.gen != nil {
			b = u.gen.AppendTo(b, r)
		} else {
			b = append(b, u.origin.Scheme+"://"+u.origin.Host...)
			b = append(b, u.targets[r.Intn(len(u.targets))]...)
		}
		b = append(b, '\n')
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

// Workload sends the set's URLs with the plan's requests (specs: method,
// headers, bodies), one unnamed step. A URL list is pre-encoded (one
// request per URL and body); generated URLs are built per request.
func (u *URLSet) Workload(specs []http1.RequestSpec) *run.Workload {
	seed := randomSeed()
	w := &run.Workload{Steps: []string{""}}
	if u.gen == nil {
		variants := make([][][]byte, len(u.targets))
		for i, t := range u.targets {
			for _, s := range specs {
				s.Target = t
				variants[i] = append(variants[i], http1.AppendRequest(nil, &s))
			}
		}
		head := specs[0].Method == "HEAD"
		w.NewRequests = func(worker int) engine.Requests {
			return &urlList{variants: variants, head: head, rng: NewRand(seed ^ splitmix(uint64(worker)+1))}
		}
		return w
	}
	var heads [][2][]byte // per body: the request line's tail and the rest of the request
	for _, s := range specs {
		s.Target = "/"
		enc := http1.AppendRequest(nil, &s)
		line := bytes.IndexByte(enc, '\n') + 1
		proto := bytes.LastIndexByte(enc[:line], ' ')
		heads = append(heads, [2][]byte{[]byte(s.Method + " "), enc[proto:]})
	}
	head := specs[0].Method == "HEAD"
	w.NewRequests = func(worker int) engine.Requests {
		return &regexURLs{gen: u.gen, heads: heads, head: head, rng: NewRand(seed ^ splitmix(uint64(worker)+1))}
	}
	return w
}

type urlList struct {
	variants [][][]byte
	head     bool
	rng      *Rand
}

func (l *urlList) Next(hit uint64) ([]byte, int, bool, bool) {
	v := l.variants[l.rng.Intn(len(l.variants))]
	return v[hit%uint64(len(v))], 0, l.head, true
}

func (l *urlList) Done(int, *http1.Parser) engine.Verdict { return engine.Verdict{} }

type regexURLs struct {
	gen   *RegexGen
	heads [][2][]byte
	head  bool
	rng   *Rand
	ctx   Ctx
	gbuf  []byte
	buf   []byte
}

func (g *regexURLs) Next(hit uint64) ([]byte, int, bool, bool) {
	h := g.heads[hit%uint64(len(g.heads))]
	g.gbuf = g.gen.AppendTo(g.gbuf[:0], g.rng)
	target := g.gbuf
	if i := bytes.Index(target, []byte("://")); i >= 0 {
		if j := bytes.IndexAny(target[i+3:], "/?"); j >= 0 {
			target = target[i+3+j:]
		} else {
			target = nil
		}
	}
	b := append(g.buf[:0], h[0]...)
	start := len(b)
	if len(target) == 0 || target[0] != '/' {
		b = append(b, '/')
	}
	b = append(b, target...)
	b = g.ctx.escape(b, start, escTarget)
	b = append(b, h[1]...)
	g.buf = b
	return b, 0, g.head, true
}

func (g *regexURLs) Done(int, *http1.Parser) engine.Verdict { return engine.Verdict{} }
