package reqgen

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"net/textproto"
	"path/filepath"
	"strings"

	"github.com/hail-loadgen/hail/internal/bodyfile"
	"github.com/hail-loadgen/hail/internal/http1"
)

// Form is a multipart/form-data body built from curl's -F arguments, once
// before the run: every request sends the same body.
type Form struct {
	// Body is the encoded multipart body.
	Body []byte
	// ContentType is "multipart/form-data; boundary=…".
	ContentType string
}

// formPart is one -F argument, parsed.
type formPart struct {
	name, filename, ctype string
	headers               []string
	data                  []byte
}

// NewForm builds the body of curl's -F arguments:
//
//	name=value            a field
//	name=@path            a file upload: filename is the path's base name,
//	                      the content type guessed from its extension as curl does
//	name=<path            a field whose value is the file's content
//	…;type=TYPE           the part's Content-Type
//	…;filename=NAME       the filename sent (also for a plain field)
//	…;headers=H: V        an extra header for the part (repeatable)
//
// A value (or a type, filename or header) in double quotes may contain ';'
// and '"' written as \". Files are read through bodyfile.Read, each at most
// limit bytes (≤ 0: bodyfile.DefaultLimit). Errors name the argument.
func NewForm(args []string, limit int64) (*Form, error) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for _, a := range args {
		p, err := parseFormPart(a, limit)
		if err != nil {
			return nil, fmt.Errorf("-F %q: %v", a, err)
		}
		h := textproto.MIMEHeader{}
		disp := `form-data; name="` + escapeDisposition(p.name) + `"`
		if p.filename != "" {
			disp += `; filename="` + escapeDisposition(p.filename) + `"`
		}
		h.Set("Content-Disposition", disp)
		if p.ctype != "" {
			h.Set("Content-Type", p.ctype)
		}
		for _, kv := range p.headers {
			k, v, ok := strings.Cut(kv, ":")
			if !ok || !http1.IsToken(strings.TrimSpace(k)) {
				return nil, fmt.Errorf("-F %q: headers=%q: write a part header as 'Name: value'", a, kv)
			}
			h.Add(strings.TrimSpace(k), strings.TrimSpace(v))
		}
		pw, err := w.CreatePart(h)
		if err != nil {
			return nil, err
		}
		if _, err := pw.Write(p.data); err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return &Form{Body: buf.Bytes(), ContentType: w.FormDataContentType()}, nil
}

// parseFormPart parses one -F argument (see NewForm).
func parseFormPart(a string, limit int64) (formPart, error) {
	var p formPart
	name, rest, ok := strings.Cut(a, "=")
	if !ok || name == "" {
		return p, fmt.Errorf("write it as name=value, name=@file or name=<file")
	}
	p.name = name
	value, rest, err := formWord(rest)
	if err != nil {
		return p, err
	}
	switch {
	case strings.HasPrefix(value, "@"):
		path := value[1:]
		if p.data, err = bodyfile.Read(path, limit); err != nil {
			return p, err
		}
		p.filename, p.ctype = filepath.Base(path), contentTypeFor(path)
	case strings.HasPrefix(value, "<"):
		if p.data, err = bodyfile.Read(value[1:], limit); err != nil {
			return p, err
		}
	default:
		p.data = []byte(value)
	}
	for rest != "" {
		rest = strings.TrimLeft(rest[1:], " ") // the ';'
		key, r, ok := strings.Cut(rest, "=")
		if !ok {
			return p, fmt.Errorf("expected type=, filename= or headers= after ';', found %q", rest)
		}
		var v string
		if v, rest, err = formWord(r); err != nil {
			return p, err
		}
		switch strings.TrimSpace(key) {
		case "type":
			p.ctype = v
		case "filename":
			p.filename = v
		case "headers":
			p.headers = append(p.headers, v)
		default:
			return p, fmt.Errorf("unknown option %q: expected type=, filename= or headers=", key)
		}
	}
	for _, v := range append([]string{p.name, p.filename, p.ctype}, p.headers...) {
		if strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }) {
			return p, fmt.Errorf("%q: control characters cannot be sent in a part's name, filename, type or headers", v)
		}
	}
	return p, nil
}

// formWord reads a value up to the next ';' (or a double-quoted one) and
// returns it and what follows (starting at the ';', or empty).
func formWord(s string) (word, rest string, err error) {
	if !strings.HasPrefix(s, `"`) {
		i := strings.IndexByte(s, ';')
		if i < 0 {
			return s, "", nil
		}
		return s[:i], s[i:], nil
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && i+1 < len(s):
			i++
			b.WriteByte(s[i])
		case c == '"':
			rest = strings.TrimLeft(s[i+1:], " ")
			if rest != "" && rest[0] != ';' {
				return "", "", fmt.Errorf("expected ';' after the quoted value, found %q", rest)
			}
			return b.String(), rest, nil
		default:
			b.WriteByte(c)
		}
	}
	return "", "", fmt.Errorf("a quoted value has no closing '\"'")
}

// escapeDisposition escapes a name or filename as HTML forms (and curl) do:
// '"' as %22, CR and LF as %0D and %0A.
func escapeDisposition(s string) string {
	return strings.NewReplacer(`"`, "%22", "\r", "%0D", "\n", "%0A").Replace(s)
}

// contentTypeFor is curl's guess of an uploaded file's type from its
// extension; application/octet-stream for the others.
func contentTypeFor(path string) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".gif":
		return "image/gif"
	case ".jpg", ".jpeg":
		return "image/jpeg"
	case ".png":
		return "image/png"
	case ".svg":
		return "image/svg+xml"
	case ".txt":
		return "text/plain"
	case ".htm", ".html":
		return "text/html"
	case ".pdf":
		return "application/pdf"
	case ".xml":
		return "application/xml"
	}
	return "application/octet-stream"
}
