// The servers steps go to: the file's targets (named once, each a URL and
// a protocol), its base (the default target), and the origins of steps'
// full URLs. Every step belongs to one origin; see origin.go for how a run
// uses them.

package scenario

import (
	"fmt"
	"net/url"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

var targetKeys = []string{"url", "protocol", "streams"}

// Protocols an origin's connections speak.
const (
	protoHTTP1 = "http1"
	protoH2    = "h2"
)

// targets reads the file's targets: name: URL, or name: {url: URL,
// protocol: http1|h2, streams: N}. grpc:// and grpcs:// URLs are HTTP/2 (h2c and h2
// over TLS); --target NAME=URL replaces a target's URL.
func (l *loader) targets() error {
	n, ok := l.nodes["targets"]
	for name := range l.o.Targets {
		if !ok || findKey(n, name) == nil {
			return fmt.Errorf("--target %s=…: the file has no target %s%s", name, name, l.targetList())
		}
	}
	if !ok {
		return nil
	}
	return l.fields(n, "targets", nil, func(name string, k, v *yaml.Node) error {
		what := "targets." + name
		if !nameRE.MatchString(name) {
			return l.errAt(k, "targets: target name %q: expected letters, digits, _ . or -", name)
		}
		var raw, proto string
		var protoNode *yaml.Node
		switch v.Kind {
		case yaml.ScalarNode:
			var err error
			if raw, err = l.str(v, what); err != nil {
				return err
			}
		case yaml.MappingNode:
			if err := l.fields(v, what, targetKeys, func(key string, kk, vv *yaml.Node) error {
				var err error
				switch key {
				case "url":
					raw, err = l.str(vv, what+".url")
				case "streams":
					var n int64
					n, err = l.integer(vv, what+".streams", 1, maxStreams)
					l.targetStreams[name], l.streamsNodes[name] = int(n), vv
				case "protocol":
					protoNode = vv
					proto, err = l.str(vv, what+".protocol")
					if err == nil && proto != protoHTTP1 && proto != protoH2 {
						err = l.errAt(vv, "%s.protocol: expected http1 or h2, found %q", what, proto)
					}
				}
				return err
			}); err != nil {
				return err
			}
			if raw == "" {
				return l.errAt(v, "%s: expected a url (url: http://HOST:PORT), found none", what)
			}
		default:
			return l.errAt(v, "%s: expected a URL such as http://127.0.0.1:8080, or {url: …, protocol: h2}, found %s", what, describe(v))
		}
		at := v
		if r, given := l.o.Targets[name]; given {
			raw = r
		}
		u, h2, err := parseTarget(raw)
		if err != nil {
			if _, given := l.o.Targets[name]; given {
				return fmt.Errorf("--target %s=%s: %v", name, raw, err)
			}
			return l.errAt(at, "%s: %v", what, err)
		}
		if h2 && proto == protoHTTP1 {
			return l.errAt(protoNode, "%s.protocol: a %s:// target speaks HTTP/2: expected h2 (or an http:// URL)", what, strings.TrimSuffix(strings.SplitN(raw, ":", 2)[0], "s"))
		}
		l.targetNodes[name] = k
		l.targetURL[name] = u
		l.targetH2[name] = h2 || proto == protoH2
		l.targetHTTP1[name] = proto == protoHTTP1
		return nil
	})
}

// findKey is the value of key in mapping n, or nil.
func findKey(n *yaml.Node, key string) *yaml.Node {
	n = resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// targetList is ": its targets are a, b" for messages ("" without any).
func (l *loader) targetList() string {
	var names []string
	if n, ok := l.nodes["targets"]; ok && resolve(n).Kind == yaml.MappingNode {
		for i := 0; i < len(resolve(n).Content); i += 2 {
			names = append(names, resolve(n).Content[i].Value)
		}
	}
	if len(names) == 0 {
		return " (it has no targets: section)"
	}
	sort.Strings(names)
	return ": its targets are " + strings.Join(names, ", ")
}

// parseTarget parses a target's URL: http(s)://host[:port][/prefix], or
// grpc(s)://host[:port] (HTTP/2: h2c, or h2 over TLS), which is returned
// as http(s) with h2 set.
func parseTarget(raw string) (u *url.URL, h2 bool, err error) {
	switch {
	case strings.HasPrefix(raw, "grpc://"):
		raw, h2 = "http://"+strings.TrimPrefix(raw, "grpc://"), true
	case strings.HasPrefix(raw, "grpcs://"):
		raw, h2 = "https://"+strings.TrimPrefix(raw, "grpcs://"), true
	}
	u, err = parseOrigin(raw)
	if err != nil && strings.Contains(err.Error(), "found scheme") {
		err = fmt.Errorf("%v: expected http://, https://, grpc:// (h2c) or grpcs://", err)
	}
	return u, h2, err
}

// originOf is the origin a step's request goes to (its index in
// s.Origins, made on first use), from its target (a name in targets, or a
// URL), its url (a full URL), or the base; -1 when it names none and there
// is no base (the step's own checks say so). grpc says the step is a gRPC
// call: its origin speaks HTTP/2.
func (l *loader) originOf(item, target, urlN, grpc *yaml.Node) (int, error) {
	what := "step"
	if n := findKey(item, "name"); n != nil {
		what = n.Value
	}
	var k int
	switch {
	case target != nil && urlN != nil:
		return 0, l.errAt(target, "%s: give target (with a path) or a full url, not both", what)
	case target != nil:
		raw, err := l.str(target, what+".target")
		if err != nil {
			return 0, err
		}
		if _, ok := l.targetURL[raw]; ok {
			k = l.namedOrigin(raw)
			break
		}
		if !strings.Contains(raw, "://") {
			return 0, l.errAt(target, "%s.target: expected a target's name%s, or a URL, found %q", what, l.targetList(), raw)
		}
		u, h2, err := parseTarget(raw)
		if err != nil {
			return 0, l.errAt(target, "%s.target: %v", what, err)
		}
		k = l.urlOrigin(u, h2)
	case urlN != nil:
		raw, err := l.str(urlN, what+".url")
		if err != nil {
			return 0, err
		}
		origin, _ := splitURL(raw)
		u, err := parseOrigin(origin)
		if err != nil || strings.Contains(origin, "{{") {
			return l.baseOrigin(), nil // the url's own checks say what is wrong with it
		}
		if l.s.Base == nil && len(l.targetURL) == 0 {
			l.s.Base = &url.URL{Scheme: u.Scheme, Host: u.Host} // the first url sets the origin of a file without base
		}
		k = l.urlOrigin(u, false)
	default:
		k = l.baseOrigin()
	}
	if k >= 0 && grpc != nil {
		o := l.s.Origins[k]
		if l.originHTTP1[k] {
			return 0, l.errAt(grpc, "%s: a grpc step speaks HTTP/2, but target %s is protocol: http1", what, o.Name)
		}
		o.GRPC, o.HTTP2 = true, true
	}
	return k, nil
}

// baseOrigin is the base's origin (-1 without a base).
func (l *loader) baseOrigin() int {
	if l.baseTarget != "" {
		return l.namedOrigin(l.baseTarget)
	}
	if l.s.Base == nil {
		return -1
	}
	return l.urlOrigin(l.s.Base, false)
}

// namedOrigin is the origin of the target called name.
func (l *loader) namedOrigin(name string) int {
	key := "target " + name
	if k, ok := l.originIdx[key]; ok {
		return k
	}
	k := l.addOrigin(key, &Origin{Name: name, URL: l.targetURL[name], HTTP2: l.targetH2[name], Streams: l.targetStreams[name]})
	l.originHTTP1[k] = l.targetHTTP1[name]
	return k
}

// urlOrigin is the origin of a URL that no target names: the base's, or
// one named by its host and port.
func (l *loader) urlOrigin(u *url.URL, h2 bool) int {
	key := u.Scheme + "://" + u.Host
	if k, ok := l.originIdx[key]; ok {
		l.s.Origins[k].HTTP2 = l.s.Origins[k].HTTP2 || h2
		return k
	}
	name := u.Host
	prefix := u
	if b := l.s.Base; b != nil && l.baseTarget == "" && b.Scheme == u.Scheme && b.Host == u.Host {
		name, prefix = "base", b
	} else {
		prefix = &url.URL{Scheme: u.Scheme, Host: u.Host}
	}
	return l.addOrigin(key, &Origin{Name: name, URL: prefix, HTTP2: h2})
}

func (l *loader) addOrigin(key string, o *Origin) int {
	k := len(l.s.Origins)
	l.s.Origins = append(l.s.Origins, o)
	l.originIdx[key] = k
	l.originHTTP1 = append(l.originHTTP1, false)
	return k
}

// checkOrigins makes the final checks of the file's origins: every target
// is sent to, a flow's steps share one origin, and a {{last}} reads a
// capture made on its own origin (each origin has virtual users of its
// own). It also works out each origin's share of the load's choices.
func (l *loader) checkOrigins() error {
	s := l.s
	for name, k := range l.targetNodes {
		if _, used := l.originIdx["target "+name]; !used {
			return l.errAt(k, "targets.%s: no step is sent to it: expected target: %s in a step (or drop it)", name, name)
		}
	}
	for name, n := range l.streamsNodes {
		if o := s.Origins[l.originIdx["target "+name]]; o.Streams > 1 && !o.HTTP2 {
			return l.errAt(n, "targets.%s.streams: several streams per connection need HTTP/2, and %s speaks HTTP/1.1: expected protocol: h2 (or a grpc:// URL), or drop streams", name, name)
		}
	}
	for i, f := range s.Flows {
		o := s.Steps[f.steps[0]].origin
		for _, st := range f.steps[1:] {
			if s.Steps[st].origin != o {
				return l.errAt(l.flowNodes[i], "flows.%s: its steps go to %s and %s: a flow is one virtual user on one connection, so its steps share one target (a pool, {{pick}} or {{take}}, carries values from one target to another)",
					f.Name, s.Origins[o].Name, s.Origins[s.Steps[st].origin].Name)
			}
		}
		f.origin = o
	}
	var total float64
	for _, st := range s.Steps {
		total += st.Weight
	}
	for _, f := range s.Flows {
		total += f.Weight
	}
	for i, st := range s.Steps {
		o := s.Origins[st.origin]
		o.steps = append(o.steps, i)
		if total > 0 && st.Weight > 0 {
			o.Share += st.Weight / total
		}
	}
	for _, f := range s.Flows {
		if total > 0 && f.Weight > 0 {
			s.Origins[f.origin].Share += f.Weight / total
		}
	}
	if n, ok := l.nodes["streams"]; ok && s.Settings.Streams > 1 && !s.anyHTTP2() {
		return l.errAt(n, "streams: several streams per connection need HTTP/2, and every target of this file speaks HTTP/1.1: drop streams (or give a target protocol: h2)")
	}
	if len(s.loadOrigins()) > 1 {
		for i, st := range s.Steps {
			for _, c := range st.lasts {
				same := false
				for _, other := range s.Steps {
					for _, cp := range other.captures {
						same = same || other.origin == st.origin && cp.id == c
					}
				}
				if !same {
					return l.errAt(l.stepNodes[i], "%s: {{last %s}} reads what this virtual user captured, but no step sent to %s captures %s (each target has virtual users of its own): expected a pool ({{pick %s}})",
						st.Name, s.captures[c], s.Origins[st.origin].Name, s.captures[c], s.captures[c])
				}
			}
		}
	}
	return nil
}
