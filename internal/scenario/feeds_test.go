package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Feed problems are caught at load, with the file and line.
func TestFeedErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.csv", "id,name\n1,ann\n")
	for _, c := range []struct{ name, feeds, path, want string }{
		{"no file", "{users: {order: random}}", "/{{feed.users.id}}", "expected file: PATH"},
		{"bad order", "{users: {file: " + good + ", order: shuffled}}", "/", "expected sequential, random or unique"},
		{"empty", "{users: {file: " + write("empty.csv", "id\n") + "}}", "/", "expected at least one row"},
		{"ragged", "{users: {file: " + write("ragged.csv", "id,name\n1\n") + "}}", "/", "line 2: wrong number of fields"},
		{"bad jsonl", "{users: {file: " + write("bad.jsonl", "{\"id\": 1}\n[1]\n") + "}}", "/", "line 2: expected a JSON object"},
		{"missing key", "{users: {file: " + write("miss.jsonl", "{\"id\": 1, \"name\": \"a\"}\n{\"id\": 2}\n") + "}}", "/", `line 2: no key "name"`},
		{"unknown ext", "{users: {file: " + write("u.txt", "id\n1\n") + "}}", "/", "cannot tell the format"},
		{"unknown column", "{users: {file: " + good + "}}", "/{{feed.users.mail}}", `feed "users" has no column "mail": expected one of id, name`},
		{"unknown feed", "{users: {file: " + good + "}}", "/{{feed.people.id}}", `undefined feed "people"`},
	} {
		src := "base: http://127.0.0.1:1\nrequests: 1\nfeeds: " + c.feeds + "\nsteps: [{name: a, path: '" + c.path + "'}]\n"
		_, err := Parse("f.yaml", []byte(src), LoadOptions{})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "f.yaml:") {
			t.Errorf("%s: got %v, want an f.yaml:LINE:COL error with %q", c.name, err, c.want)
		}
	}
}

// Scenario.Files lists every file the scenario read besides itself,
// resolved against its directory, each once: what a distributed run ships.
func TestScenarioFiles(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"users.csv": "id\n1\n", "body.json": `{"a":1}`, "lines.txt": "x\ny\n"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	abs := filepath.Join(dir, "lines.txt")
	src := "base: http://127.0.0.1:1\nrequests: 1\nfeeds: {users: {file: users.csv}}\nsteps:\n" +
		"  - {name: a, method: POST, path: '/{{feed.users.id}}', body_file: body.json}\n" +
		"  - {name: b, method: POST, path: /, body_lines: " + abs + "}\n" +
		"  - {name: c, method: POST, path: /, body_file: ./body.json}\n"
	sc, err := Parse(filepath.Join(dir, "s.yaml"), []byte(src), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "users.csv"), filepath.Join(dir, "body.json"), abs}
	if strings.Join(sc.Files, " ") != strings.Join(want, " ") {
		t.Errorf("files %q, want %q", sc.Files, want)
	}
}
