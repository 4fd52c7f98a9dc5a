package reqgen

import (
	"bufio"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/hail-loadgen/hail/internal/random"
)

// URLSet is oha's --urls-from-file (one URL per line, a random one per
// request) or --rand-regex-url (each URL generated from a regular
// expression). Every URL must share one origin (scheme, host and port):
// hail connects to one origin per run.
type URLSet struct {
	origin  *url.URL
	first   string   // a URL of the set, for the plan
	targets []string // --urls-from-file: the request targets
	gen     *random.Regex
	prefix  string // --rand-regex-url: the generated origin, checked on samples
	pattern string // what the user gave: the file's path or the regular expression
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
	set := &URLSet{pattern: path}
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
// a literal dot ("almost every URL has dots in its host"), and x*, x+ and
// x{n,} repeat at most maxRepeat extra times.
func RegexURLs(pattern string, maxRepeat int) (*URLSet, error) {
	g, err := random.CompileRegex(strings.ReplaceAll(pattern, ".", `\.`), maxRepeat)
	if err != nil {
		return nil, fmt.Errorf("--rand-regex-url: %v", err)
	}
	set := &URLSet{gen: g, pattern: pattern}
	var r random.Rand
	for i := range 200 {
		r = *random.New(uint64(i))
		s := g.String(&r)
		origin := originOf(s)
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

// Pattern is what the set was made from: the file's path
// (--urls-from-file) or the regular expression (--rand-regex-url).
func (u *URLSet) Pattern() string { return u.pattern }

// Generated reports whether the URLs come from a regular expression.
func (u *URLSet) Generated() bool { return u.gen != nil }

// originOf returns the scheme://host[:port] a URL starts with.
func originOf(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return raw
	}
	if end := strings.IndexAny(rest, "/?"); end >= 0 {
		rest = rest[:end]
	}
	return scheme + "://" + rest
}
