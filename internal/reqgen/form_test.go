package reqgen

import (
	"bytes"
	"io"
	"mime"
	"mime/multipart"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// -F builds what curl sends: fields, uploads with their filename and a
// guessed type, fields read from files, and the ;type= / ;filename= /
// ;headers= options; the body parses as multipart/form-data.
func TestForm(t *testing.T) {
	dir := t.TempDir()
	photo := filepath.Join(dir, "photo.PNG")
	note := filepath.Join(dir, "note")
	os.WriteFile(photo, []byte("\x89PNG..."), 0o644)
	os.WriteFile(note, []byte("from a file"), 0o644)
	f, err := NewForm([]string{"name=value", "img=@" + photo, "text=<" + note, "doc=@" + note + ";type=text/csv;filename=r.csv",
		`q="a;b \"c\""`, "h=x;headers=X-Part: 1", `we"ird=v`}, 0)
	if err != nil {
		t.Fatal(err)
	}
	mt, params, err := mime.ParseMediaType(f.ContentType)
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		t.Fatalf("Content-Type %q: %v", f.ContentType, err)
	}
	rd := multipart.NewReader(bytes.NewReader(f.Body), params["boundary"])
	type part struct{ name, file, ctype, data, extra string }
	var got []part
	for {
		p, err := rd.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(p)
		got = append(got, part{p.FormName(), p.FileName(), p.Header.Get("Content-Type"), string(data), p.Header.Get("X-Part")})
	}
	want := []part{
		{"name", "", "", "value", ""},
		{"img", "photo.PNG", "image/png", "\x89PNG...", ""},
		{"text", "", "", "from a file", ""},
		{"doc", "r.csv", "text/csv", "from a file", ""},
		{"q", "", "", `a;b "c"`, ""},
		{"h", "", "", "x", "1"},
		{"we%22ird", "", "", "v", ""},
	}
	if len(got) != len(want) {
		t.Fatalf("parts %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("part %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestFormBadInput(t *testing.T) {
	for _, tc := range []struct{ arg, want string }{
		{"novalue", "name=value"},
		{"=x", "name=value"},
		{"f=@/nonexistent/file", "/nonexistent/file"},
		{"f=<", "no such file"},
		{"f=x;size=3", "unknown option"},
		{"f=x;type", "after ';'"},
		{`f="unclosed`, "closing"},
		{`f="a"b`, "expected ';'"},
		{"f=x;headers=NoColon", "'Name: value'"},
	} {
		if _, err := NewForm([]string{tc.arg}, 0); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "-F ") {
			t.Errorf("-F %q: %v, want an error naming -F and %q", tc.arg, err, tc.want)
		}
	}
}

// Any -F argument either fails with a message or makes a body that parses
// back into one part with the field's name.
func FuzzForm(f *testing.F) {
	for _, s := range []string{"a=b", `q="x;y"`, "f=x;type=text/plain;filename=n", "h=x;headers=A: b", `a="\"`, "=", "a=;;"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		if strings.ContainsAny(arg, "@<") {
			return // file reads
		}
		form, err := NewForm([]string{arg}, 0)
		if err != nil {
			return
		}
		_, params, err := mime.ParseMediaType(form.ContentType)
		if err != nil {
			t.Fatal(err)
		}
		p, err := multipart.NewReader(bytes.NewReader(form.Body), params["boundary"]).NextPart()
		if err != nil {
			t.Fatalf("%q: body does not parse: %v", arg, err)
		}
		name, _, _ := strings.Cut(arg, "=")
		if p.FormName() == "" && name != "" && !strings.ContainsAny(name, "\"\\\r\n") { // curl leaves a backslash as it is
			t.Errorf("%q: part has no name", arg)
		}
	})
}
