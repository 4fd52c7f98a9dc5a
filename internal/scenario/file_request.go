// One step's request: its target (a path under base, or a URL of the run's
// origin), its headers (the file's, then the step's) and its body (inline,
// body_file or body_lines).

package scenario

import (
	"bytes"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/hail-loadgen/hail/internal/bodyfile"
	"github.com/hail-loadgen/hail/internal/http1"
	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/scenario/template"
)

func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// headerNode is one header of a headers mapping (or a gRPC step's
// metadata): its name, key and value nodes, the mapping's name in
// messages, and whether it is the file's.
type headerNode struct {
	name   string
	k, v   *yaml.Node
	what   string // "headers", "create.headers", "create.grpc.metadata"
	global bool
}

// headerNodes reads a headers mapping (what names it in messages; global:
// the file's).
func (l *loader) headerNodes(n *yaml.Node, what string, global bool) ([]headerNode, error) {
	var out []headerNode
	err := l.fields(n, what, nil, func(key string, k, v *yaml.Node) error {
		if !isToken(key) {
			return l.errAt(k, "%s: header name %q: expected a token (letters, digits and !#$%%&'*+-.^_`|~)", what, key)
		}
		lk := strings.ToLower(key)
		if lk == "content-length" || lk == "transfer-encoding" {
			return l.errAt(k, "%s: %s is set by hail from the body: expected other headers", what, key)
		}
		if err := l.bareTemplate(v, what+"."+key); err != nil {
			return err
		}
		if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
			return l.errAt(v, "%s.%s: expected a string value, found %s", what, key, describe(v))
		}
		if strings.ContainsAny(v.Value, "\r\n") {
			return l.errAt(v, "%s.%s: expected a single-line value, found a line break", what, key)
		}
		out = append(out, headerNode{key, k, v, what, global})
		return nil
	})
	return out, err
}

// headerSource is a headers mapping of a step (nil: none) and its name in
// messages.
type headerSource struct {
	n    *yaml.Node
	what string
}

// mergeHeaders reads the file's headers, then each of srcs in turn: a
// header replaces an earlier one of the same name (in any case), in the
// later one's place.
func (l *loader) mergeHeaders(srcs ...headerSource) ([]headerNode, error) {
	var hs []headerNode
	add := func(own []headerNode) {
		for _, h := range own {
			hs = slices.DeleteFunc(hs, func(x headerNode) bool { return strings.EqualFold(x.name, h.name) })
			hs = append(hs, h)
		}
	}
	global, err := l.fileHeaders()
	if err != nil {
		return nil, err
	}
	add(global)
	for _, src := range srcs {
		if src.n == nil {
			continue
		}
		own, err := l.headerNodes(src.n, src.what, false)
		if err != nil {
			return nil, err
		}
		add(own)
	}
	return hs, nil
}

// fileHeaders are the file's top-level headers, read once: the first step
// that merges them reports their problems.
func (l *loader) fileHeaders() ([]headerNode, error) {
	if !l.headersRead {
		l.headersRead = true
		if n, ok := l.nodes["headers"]; ok {
			l.headers, l.headersErr = l.headerNodes(n, "headers", true)
		}
	}
	return l.headers, l.headersErr
}

// splitURL splits an absolute URL into its origin and its request target.
func splitURL(raw string) (origin, target string) {
	i := strings.Index(raw, "://")
	if i < 0 {
		return raw, "/"
	}
	j := strings.IndexAny(raw[i+3:], "/?")
	if j < 0 {
		return raw, "/"
	}
	origin, target = raw[:i+3+j], raw[i+3+j:]
	if target[0] == '?' {
		target = "/" + target
	}
	return origin, target
}

// stepTarget compiles the step's request target: a path under base, or a
// URL of the run's origin (the first such URL sets the origin when there
// is no base). It returns the target and the Host it is sent to.
func (l *loader) stepTarget(st *Step, it *yaml.Node, n stepFields, env *template.Env) (*template.Template, string, error) {
	what := st.Name
	urlN, pathN := n.vals["url"], n.vals["path"]
	var target *template.Template
	var targetNode *yaml.Node
	var host string
	var err error
	switch {
	case urlN != nil && pathN != nil:
		return nil, "", l.errAt(n.keys["path"], "%s: give url or path, not both", what)
	case urlN == nil && pathN == nil:
		return nil, "", l.errAt(it, "%s: expected a path (under base) or a url, found neither", what)
	case pathN != nil:
		target, host, err = l.stepPath(st, pathN, env)
		targetNode = pathN
	default:
		target, host, err = l.stepURL(st, urlN, env)
		targetNode = urlN
	}
	if err != nil {
		return nil, "", err
	}
	for lit := range target.Literals() {
		if i := bytes.IndexFunc(lit, func(r rune) bool { return r <= 0x20 || r >= 0x7f }); i >= 0 {
			return nil, "", l.errAt(targetNode, "%s: the request target may not contain %q: expected it percent-encoded (%%%02X)", what, lit[i], lit[i])
		}
	}
	return target, host, nil
}

// stepPath compiles a path under the step's target (the base's URL by
// default).
func (l *loader) stepPath(st *Step, pathN *yaml.Node, env *template.Env) (*template.Template, string, error) {
	what := st.Name
	p, err := l.str(pathN, what+".path")
	if err != nil {
		return nil, "", err
	}
	if st.origin < 0 {
		return nil, "", l.errAt(pathN, "%s.path: a path needs a base URL: expected base: http://HOST:PORT at the top of the file (or --base), a target, or a full url", what)
	}
	base := l.s.Origins[st.origin].URL
	if !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "{{") {
		return nil, "", l.errAt(pathN, "%s.path: expected a path starting with /, found %q", what, p)
	}
	t, err := template.Compile(p, env, template.Target)
	if err != nil {
		return nil, "", l.errIn(pathN, err, what+".path")
	}
	st.Target = p
	return template.Concat(template.Text(strings.TrimSuffix(base.EscapedPath(), "/")), t), base.Host, nil
}

// stepURL compiles a full URL, whose origin must be written out: it is
// the step's origin (file_targets.go).
func (l *loader) stepURL(st *Step, urlN *yaml.Node, env *template.Env) (*template.Template, string, error) {
	what := st.Name
	raw, err := l.str(urlN, what+".url")
	if err != nil {
		return nil, "", err
	}
	origin, rest := splitURL(raw)
	if strings.Contains(origin, "{{") {
		return nil, "", l.errAt(urlN, "%s.url: the scheme, host and port must be written out (hail connects to each origin it names): expected templates only in the path, found %q", what, origin)
	}
	u, err := parseOrigin(origin)
	if err != nil {
		return nil, "", l.errAt(urlN, "%s.url: %v", what, err)
	}
	t, err := template.Compile(rest, env, template.Target)
	if err != nil {
		te := err.(*template.Error)
		te.Offset += len(origin)
		return nil, "", l.errIn(urlN, te, what+".url")
	}
	st.Target = raw
	return t, u.Host, nil
}

// stepHeaders compiles the request head: the request line, Host unless
// given, the file's headers then the step's (a step's header replaces the
// file's of the same name), then User-Agent unless given.
func (l *loader) stepHeaders(st *Step, n stepFields, target *template.Template, host string, env *template.Env) error {
	what := st.Name
	hs, err := l.mergeHeaders(headerSource{n.vals["headers"], what + ".headers"})
	if err != nil {
		return err
	}
	parts := []*template.Template{template.Text(st.Method + " "), target, template.Text(" HTTP/1.1\r\n")}
	hasHost, hasUA := false, false
	for _, h := range hs {
		hasHost = hasHost || strings.EqualFold(h.name, "host")
		hasUA = hasUA || strings.EqualFold(h.name, "user-agent")
	}
	if !hasHost {
		parts = append(parts, template.Text("Host: "+http1.StripZone(host)+"\r\n"))
	}
	for _, h := range hs {
		t, err := template.Compile(h.v.Value, env, template.Header)
		if err != nil {
			w := what + ".headers." + h.name
			if h.global {
				w = "headers." + h.name
			}
			return l.errIn(h.v, err, w)
		}
		parts = append(parts, template.Text(h.name+": "), t, template.Text("\r\n"))
	}
	if !hasUA {
		parts = append(parts, template.Text("User-Agent: hail/"+plan.Version+"\r\n"))
	}
	if n.vals["body_json"] != nil && !slices.ContainsFunc(hs, func(h headerNode) bool { return strings.EqualFold(h.name, "content-type") }) {
		parts = append(parts, template.Text("Content-Type: application/json\r\n"))
	}
	st.head = template.Concat(parts...)
	return nil
}

// stepBody reads the step's body: at most one of body (a template),
// body_file (bytes as they are) and body_lines (one body per line, used in
// turn).
func (l *loader) stepBody(st *Step, n stepFields, env *template.Env) error {
	what := st.Name
	nb := 0
	for _, k := range []string{"body", "body_json", "body_file", "body_lines"} {
		if n.vals[k] != nil {
			nb++
			if nb > 1 {
				return l.errAt(n.keys[k], "%s: give one of body, body_json, body_file and body_lines, found more", what)
			}
		}
	}
	if v := n.vals["body_json"]; v != nil {
		t, err := l.bodyJSON(v, what+".body_json", env, true)
		if err != nil {
			return err
		}
		if t.Static() {
			st.bodyLit = t.Literal()
		} else {
			st.body = t
		}
	}
	if v := n.vals["body"]; v != nil {
		if err := l.bareTemplate(v, what+".body"); err != nil {
			return err
		}
		if v.Kind == yaml.MappingNode || v.Kind == yaml.SequenceNode {
			return l.errAt(v, "%s.body: expected a string, found %s: to send it as JSON, write body_json: instead of body:", what, describe(v))
		}
		b, err := l.str(v, what+".body")
		if err != nil {
			return err
		}
		t, err := template.Compile(b, env, template.Raw)
		if err != nil {
			return l.errIn(v, err, what+".body")
		}
		if t.Static() {
			st.bodyLit = t.Literal()
		} else {
			st.body = t
		}
	}
	if v := n.vals["body_file"]; v != nil {
		p, err := l.str(v, what+".body_file")
		if err != nil {
			return err
		}
		b, err := bodyfile.Map(l.path(p), l.o.FileLimit, 0) // sent as it is: mapped, never copied
		if err != nil {
			return l.errAt(v, "%s.body_file: %v", what, err)
		}
		st.bodyLit = b
	}
	if v := n.vals["body_lines"]; v != nil {
		p, err := l.str(v, what+".body_lines")
		if err != nil {
			return err
		}
		lines, err := bodyfile.Lines(l.path(p), l.o.FileLimit)
		if err != nil {
			return l.errAt(v, "%s.body_lines: %v", what, err)
		}
		if len(lines) == 0 {
			return l.errAt(v, "%s.body_lines: expected a file with one body per line, found an empty file", what)
		}
		st.lines = lines
	}
	return nil
}
