package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// ohaFacts is testdata/oha-1.15.json: facts read from oha 1.15's source.
type ohaFacts struct {
	Flags []struct {
		Short, Long, Value, Default, Env string
		Values, Aliases                  []string
		Hidden                           bool
	}
	Conflicts [][2]string
	Requires  [][2]string
	JSON      struct {
		Top             []string            `json:"top"`
		OnlyWithSplit   []string            `json:"only_with_stats_success_breakdown"`
		Objects         map[string][]string `json:"objects"`
		HistogramLabels int                 `json:"histogram_labels"`
	}
	Text struct {
		Headings          []string          `json:"headings"`
		BreakdownHeadings []string          `json:"breakdown_headings"`
		SummaryLines      []string          `json:"summary_lines"`
		DetailsLines      []string          `json:"details_lines"`
		Percentiles       []string          `json:"percentiles"`
		UnitLabels        map[string]string `json:"unit_labels"`
	}
	SQLite struct {
		Columns []string `json:"columns"`
	} `json:"sqlite"`
}

func readOhaFacts(t *testing.T) *ohaFacts {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "oha-1.15.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f ohaFacts
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return &f
}

// helpFlag is a flag as hail --help lists it.
type helpFlag struct {
	short, long, value, desc string
}

var helpLine = regexp.MustCompile(`^  (?:-(\S), |    )--(\S+)(?: (\S+))?(?:\s+(.*))?$`)

// parseHelp reads the flags of hail --help: names, value and description
// (continuation lines joined).
func parseHelp(t *testing.T, help string) map[string]*helpFlag {
	flags := map[string]*helpFlag{}
	var last *helpFlag
	for _, line := range strings.Split(help, "\n") {
		if m := helpLine.FindStringSubmatch(line); m != nil {
			last = &helpFlag{short: m[1], long: m[2], value: m[3], desc: m[4]}
			flags["--"+last.long] = last
			if last.short != "" {
				flags["-"+last.short] = last
			}
			continue
		}
		if last != nil && strings.HasPrefix(line, strings.Repeat(" ", flagColumn)) {
			last.desc = strings.TrimSpace(last.desc + " " + strings.TrimSpace(line))
			continue
		}
		last = nil
	}
	return flags
}

// Every option of oha 1.15 is one of hail's, with the same short and long
// names, a value where oha takes one, oha's default, and every value oha
// accepts; the help fits 100 columns and lists the groups in oha's order.
func TestOhaFlags(t *testing.T) {
	t.Parallel()
	facts := readOhaFacts(t)
	help, _, code := hail(t, "--help")
	if code != 0 {
		t.Fatalf("--help exit %d", code)
	}
	for i, line := range strings.Split(help, "\n") {
		if n := len([]rune(line)); n > 100 {
			t.Errorf("--help line %d is %d columns wide: %q", i+1, n, line)
		}
		if strings.Contains(line, "[=true|false]") {
			t.Errorf("--help line %d shows a boolean's value: %q", i+1, line)
		}
	}
	var at []int
	for _, g := range groupOrder {
		at = append(at, strings.Index(help, "\n"+g+":\n"))
	}
	if !slices.IsSorted(at) || at[0] < 0 {
		t.Errorf("--help groups at %v, want all of %v in that order", at, groupOrder)
	}
	flags := parseHelp(t, help)
	if len(flags) < 60 {
		t.Fatalf("parsed only %d flags from --help:\n%s", len(flags), help)
	}
	for _, o := range facts.Flags {
		name := "--" + o.Long
		if o.Long == "" {
			name = "-" + o.Short
		}
		if o.Hidden {
			continue // --completions: TestOhaHiddenAndAliases
		}
		h := flags[name]
		if h == nil {
			t.Errorf("oha's %s is not in hail --help", name)
			continue
		}
		if o.Short != "" && h.short != o.Short || o.Long != "" && h.long != o.Long {
			t.Errorf("oha's -%s/--%s is hail's -%s/--%s", o.Short, o.Long, h.short, h.long)
		}
		if (o.Value != "") != (h.value != "") {
			t.Errorf("%s: oha takes a value: %v, hail: %v", name, o.Value != "", h.value != "")
		}
		if o.Default != "" && o.Default != "0" && !strings.Contains(h.desc, "(default "+o.Default+")") {
			t.Errorf("%s: oha's default is %s, hail's help says %q", name, o.Default, h.desc)
		}
		if o.Default == "0" && strings.Contains(h.desc, "(default ") {
			t.Errorf("%s: oha's default is 0, hail's help says %q", name, h.desc)
		}
		if o.Env != "" && !strings.Contains(h.desc, o.Env) {
			t.Errorf("%s: oha reads $%s; hail's help does not say so: %q", name, o.Env, h.desc)
		}
		for _, v := range o.Values {
			_, stderr, _ := hailIn(t, name, v, "--dump-urls", "1", "http://127.0.0.1:1/")
			if strings.Contains(stderr, "is not one of") || strings.Contains(stderr, "invalid argument") {
				t.Errorf("%s %s: oha accepts the value, hail says %q", name, v, stderr)
			}
		}
	}
}

// oha's hidden --completions and its --disable-color alias.
func TestOhaHiddenAndAliases(t *testing.T) {
	t.Parallel()
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		stdout, stderr, code := hailIn(t, "--completions", shell)
		if code != 0 || len(stdout) < 100 || !strings.Contains(stdout, "hail") {
			t.Errorf("--completions %s: exit %d, %d bytes, %q", shell, code, len(stdout), stderr)
		}
	}
	// elvish: oha's clap_complete has it, cobra does not; one clear line.
	if _, stderr, code := hailIn(t, "--completions", "elvish"); code != 1 || !strings.Contains(stderr, "bash, zsh, fish and powershell") {
		t.Errorf("--completions elvish: exit %d %q", code, stderr)
	}
	if stdout, _, code := hailIn(t, "--disable-color", "--dump-urls", "2", "http://127.0.0.1:1/x"); code != 0 || stdout != "http://127.0.0.1:1/x\nhttp://127.0.0.1:1/x\n" {
		t.Errorf("--disable-color: exit %d %q", code, stdout)
	}
	if stdout, _, code := hailIn(t, "-V"); code != 0 || !strings.HasPrefix(stdout, "hail ") {
		t.Errorf("-V: exit %d %q", code, stdout)
	}
}

// oha's conflicting and dependent options, each decided: an error as in
// oha, or accepted with a meaning (README's oha column says which).
func TestOhaConflicts(t *testing.T) {
	t.Parallel()
	facts := readOhaFacts(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "body")
	os.WriteFile(file, []byte("a\nb\n"), 0o644)
	arg := map[string][]string{
		"n": {"-n", "10"}, "z": {"-z", "1s"}, "q": {"-q", "5"}, "burst-delay": {"--burst-delay", "1s"}, "burst-rate": {"--burst-rate", "2"},
		"d": {"-d", "x"}, "D": {"-D", file}, "Z": {"-Z", file}, "form": {"-F", "a=b"}, "http2": {"--http2"},
		"http-version": {"--http-version", "1.1"}, "proxy-http2": {"--proxy-http2", "-x", "http://127.0.0.1:3128"},
		"proxy-http-version": {"--proxy-http-version", "1.1", "-x", "http://127.0.0.1:3128"}, "unix-socket": {"--unix-socket", "/tmp/none.sock"},
		"vsock-addr": {"--vsock-addr", "3:80"}, "w": {"-w"}, "max-repeat": {"--max-repeat", "3"}, "rand-regex-url": {"--rand-regex-url"},
		"cert": {"--cert", file}, "key": {"--key", file}, "aws-sigv4": {"--aws-sigv4", "aws:amz:us-east-1:execute-api"}, "a": {"-a", "k:s"},
	}
	// What hail does with each pair: "error", or "ok" (accepted).
	decided := map[[2]string]string{
		{"n", "z"}: "error", {"q", "burst-delay"}: "error", {"q", "burst-rate"}: "error",
		{"d", "D"}: "error", {"d", "Z"}: "error", {"d", "form"}: "error", {"D", "Z"}: "error", {"D", "form"}: "error", {"Z", "form"}: "error",
		{"http2", "http-version"}:             "error", // --http2 with --http-version 1.1; the same version twice is accepted
		{"proxy-http2", "proxy-http-version"}: "error", {"unix-socket", "vsock-addr"}: "error",
		// requires: the first alone
		{"w", "z"}: "ok", {"burst-delay", "burst-rate"}: "ok", {"burst-rate", "burst-delay"}: "error",
		{"max-repeat", "rand-regex-url"}: "error", {"cert", "key"}: "ok", {"key", "cert"}: "error", {"aws-sigv4", "a"}: "error",
	}
	// In this process when the AWS keys are not set here; else in a
	// process without them (--aws-session's pairs must not find them).
	run := hailIn
	if os.Getenv("AWS_ACCESS_KEY_ID") != "" || os.Getenv("AWS_SECRET_ACCESS_KEY") != "" {
		run = func(t *testing.T, args ...string) (string, string, int) {
			return hailEnv(t, []string{"AWS_ACCESS_KEY_ID=", "AWS_SECRET_ACCESS_KEY="}, args...)
		}
	}
	check := func(pair [2]string, args []string) {
		want, ok := decided[pair]
		if !ok {
			t.Errorf("oha's %s/%s: no decision", pair[0], pair[1])
			return
		}
		target := "http://127.0.0.1:1/"
		if pair[0] == "cert" || pair[0] == "key" {
			target = "https://127.0.0.1:1/"
		}
		args = append(append(args, "--dump-urls", "1"), target)
		_, stderr, code := run(t, args...)
		if got := map[bool]string{true: "ok", false: "error"}[code == 0]; got != want {
			t.Errorf("%s: %s (exit %d, %q), decided %s", strings.Join(args, " "), got, code, stderr, want)
		}
	}
	for _, c := range facts.Conflicts {
		check(c, append(slices.Clone(arg[c[0]]), arg[c[1]]...))
	}
	for _, r := range facts.Requires {
		check(r, slices.Clone(arg[r[0]]))
	}
}

// hail's JSON has oha's keys in oha's order, and its text report oha's
// headings and lines, against a real run.
func TestOhaJSONAndText(t *testing.T) {
	t.Parallel()
	facts := readOhaFacts(t)
	base := startServe(t)
	stdout, stderr, code := hail(t, "-n", "200", "-c", "4", "--stats-success-breakdown", "--output-format", "json", base+"/?status=503:20")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	keys := objectKeys(t, []byte(stdout), "")
	want := append(slices.Clone(facts.JSON.Top), "hail")
	if !slices.Equal(keys, want) {
		t.Errorf("top-level keys\n %v\nwant oha's order\n %v", keys, want)
	}
	for path, wantKeys := range facts.JSON.Objects {
		if got := objectKeys(t, []byte(stdout), path); !slices.Equal(got, wantKeys) {
			t.Errorf("%s: keys %v, want %v", path, got, wantKeys)
		}
	}
	for _, h := range []string{"responseTimeHistogram", "responseTimeHistogramSuccessful", "responseTimeHistogramNotSuccessful"} {
		if n := len(objectKeys(t, []byte(stdout), h)); n != facts.JSON.HistogramLabels {
			t.Errorf("%s has %d labels, want oha's %d", h, n, facts.JSON.HistogramLabels)
		}
	}
	stdout, _, _ = hail(t, "-n", "100", "-c", "2", base+"/")
	if keys := objectKeys(t, []byte(mustRun(t, "-n", "20", "-j", base+"/")), ""); slices.ContainsFunc(keys, func(k string) bool {
		return slices.Contains(facts.JSON.OnlyWithSplit, k)
	}) {
		t.Errorf("breakdown keys without --stats-success-breakdown: %v", keys)
	}
	text, _, _ := hail(t, "-n", "100", "-c", "2", "--stats-success-breakdown", base+"/?status=503:20")
	last := -1
	for _, h := range append(facts.Text.Headings[:3], append(facts.Text.BreakdownHeadings, facts.Text.Headings[3:]...)...) {
		i := strings.Index(text, "\n"+h+"\n")
		if h == "Summary:" && strings.HasPrefix(text, h+"\n") {
			i = 0
		}
		if i <= last && !(i == 0 && last == -1) {
			t.Errorf("heading %q at %d, after %d: not in oha's order\n%s", h, i, last, text)
		}
		last = i
	}
	for _, l := range append(append(facts.Text.SummaryLines, facts.Text.DetailsLines...), facts.Text.Percentiles...) {
		if !strings.Contains(text, "  "+l) {
			t.Errorf("text report lacks oha's line %q", l)
		}
	}
	if !regexp.MustCompile(`(?m)^  Total:\t[0-9.]+ (ns|us|ms|sec|min|hr)$`).MatchString(stdout) {
		t.Errorf("Total is not in one of oha's units:\n%s", stdout)
	}
}

// mustRun runs hail and returns stdout, failing the test on a non-zero exit.
func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	stdout, stderr, code := hail(t, args...)
	if code != 0 {
		t.Fatalf("hail %s: exit %d: %s", strings.Join(args, " "), code, stderr)
	}
	return stdout
}

// objectKeys returns the keys, in document order, of the object at path
// ("a.b"; "" for the top level) of a JSON document.
func objectKeys(t *testing.T, doc []byte, path string) []string {
	t.Helper()
	var raw json.RawMessage = doc
	if path != "" {
		for _, part := range strings.Split(path, ".") {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			raw = m[part]
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("%s is not an object", path)
	}
	var keys []string
	for dec.More() {
		tok, _ := dec.Token()
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}
