package main

// The docs-commands test: every hail command in README.md's and docs/*.md's
// code blocks (and hail demo's suggestions) is checked against the command
// tree — its subcommand exists, every flag exists and takes the value
// given, the positional arguments fit — and the shell blocks of README and
// those of docs/ that start their own target run as written, each in a
// network namespace of its own (so `hail serve &` on
// 127.0.0.1:8080 meets no other server), with -z and -n capped. Commands
// are read with a shell parser (mvdan.cc/sh), so quotes, pipes, `&&`,
// `&`, comments and line continuations are what a shell makes of them.

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"mvdan.cc/sh/v3/syntax"

	"github.com/hail-loadgen/hail/internal/testtier"
)

// docBlock is one fenced code block of a Markdown file.
type docBlock struct {
	file string // relative to the repository
	line int    // of the opening fence
	lang string // the info string's first word
	text string // the commands: a shell block whole, else its "$ " lines
}

// docBlocks returns the fenced blocks of the Markdown files, keeping the
// shell blocks whole and, of the others (output samples), the lines a
// prompt starts.
func docBlocks(t *testing.T, root string, files []string) []docBlock {
	t.Helper()
	var out []docBlock
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		var cur *docBlock
		for i, l := range strings.Split(string(data), "\n") {
			trimmed := strings.TrimSpace(l)
			if strings.HasPrefix(trimmed, "```") {
				if cur == nil {
					lang, _, _ := strings.Cut(strings.TrimPrefix(trimmed, "```"), " ")
					cur = &docBlock{file: f, line: i + 1, lang: lang}
					continue
				}
				out = append(out, *cur)
				cur = nil
				continue
			}
			if cur == nil {
				continue
			}
			switch {
			case cur.lang == "sh" || cur.lang == "bash" || cur.lang == "shell":
				cur.text += l + "\n"
			case strings.HasPrefix(trimmed, "$ "):
				cur.text += strings.TrimPrefix(trimmed, "$ ") + "\n"
			}
		}
	}
	return out
}

// hailCall is one hail command found in a block.
type hailCall struct {
	where string   // file:line
	args  []string // after "hail"
}

// placeholder stands for what a shell would expand ($VAR, $(…)): a value
// every flag taking a number, a duration or a time accepts.
const placeholder = "1"

// hailCalls parses a block as a shell script and returns its hail
// commands: a call whose word is "hail" (also after timeout, taskset, ssh
// HOST, …) or "go run ./cmd/hail".
func hailCalls(b docBlock) ([]hailCall, error) {
	f, err := syntax.NewParser(syntax.KeepComments(false)).Parse(strings.NewReader(b.text), b.file)
	if err != nil {
		return nil, err
	}
	var calls []hailCall
	syntax.Walk(f, func(n syntax.Node) bool {
		ce, ok := n.(*syntax.CallExpr)
		if !ok || len(ce.Args) == 0 {
			return true
		}
		words := make([]string, len(ce.Args))
		for i, w := range ce.Args {
			words[i] = wordString(w)
		}
		for i, w := range words {
			rest := words[i+1:]
			if w == "go" && len(rest) >= 2 && rest[0] == "run" && rest[1] == "./cmd/hail" {
				rest = rest[2:]
			} else if w != "hail" {
				continue
			}
			calls = append(calls, hailCall{where: fmt.Sprintf("%s:%d", b.file, b.line+int(ce.Pos().Line())), args: rest})
			break
		}
		return true
	})
	return calls, nil
}

// wordString is a word as the shell would pass it, with what it would
// expand standing in as placeholder.
func wordString(w *syntax.Word) string {
	var s strings.Builder
	var part func(p syntax.WordPart)
	part = func(p syntax.WordPart) {
		switch p := p.(type) {
		case *syntax.Lit:
			s.WriteString(p.Value)
		case *syntax.SglQuoted:
			s.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				part(q)
			}
		default:
			s.WriteString(placeholder)
		}
	}
	for _, p := range w.Parts {
		part(p)
	}
	return s.String()
}

// checkArgs parses args with a fresh command tree as hail would, without
// running anything: the subcommand, every flag and its value, and the
// number of positional arguments.
func checkArgs(args []string) error {
	root := newCommandTree()
	root.AddCommand(newKubeCmd())
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	cmd, rest, err := root.Find(args)
	if err != nil {
		return err
	}
	cmd.InitDefaultHelpFlag()
	if err := cmd.ParseFlags(rest); err != nil {
		return err
	}
	if help, _ := cmd.Flags().GetBool("help"); help {
		return nil
	}
	pos := cmd.Flags().Args()
	if err := cmd.ValidateArgs(pos); err != nil {
		return err
	}
	if cmd.Name() == "run" && cmd.Parent().Name() == "kube" { // the shards' own arguments, after --
		if i := indexOf(rest, "--"); i >= 0 {
			return checkArgs(rest[i+1:])
		}
	}
	return nil
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

// docFiles are the Markdown files whose commands are checked.
func docFiles(t *testing.T, root string) []string {
	t.Helper()
	files := []string{"README.md"}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		rel, _ := filepath.Rel(root, d)
		files = append(files, rel)
	}
	return files
}

// Every hail command in the docs parses: a flag that does not exist, a
// value a flag refuses or a wrong number of arguments fails here.
func TestDocsCommandsParse(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	n := 0
	for _, b := range docBlocks(t, root, docFiles(t, root)) {
		calls, err := hailCalls(b)
		if err != nil {
			t.Errorf("%s:%d: a shell block that does not parse: %v", b.file, b.line, err)
			continue
		}
		for _, c := range calls {
			n++
			if err := checkArgs(c.args); err != nil {
				t.Errorf("%s: hail %s: %v", c.where, strings.Join(c.args, " "), err)
			}
		}
	}
	for _, next := range demoNext {
		calls, err := hailCalls(docBlock{file: "hail demo", text: next[0]})
		if err != nil || len(calls) != 1 {
			t.Fatalf("hail demo's %q: %v", next[0], err)
		}
		if err := checkArgs(calls[0].args); err != nil {
			t.Errorf("hail demo suggests %q: %v", next[0], err)
		}
	}
	if n < 50 {
		t.Errorf("only %d hail commands found in the docs: the extraction is broken", n)
	}
	t.Logf("%d commands checked", n)
}

// The checker itself: it refuses what hail refuses.
func TestDocsCheckerRefuses(t *testing.T) {
	t.Parallel()
	for _, line := range []string{
		"hail --no-such-flag http://127.0.0.1:8080/",
		"hail -z 10s -n 5 http://127.0.0.1:8080/ --fps 0",
		"hail merge --no-such-flag a.json",
		"hail kube run --shards 4 -- --no-such-flag http://svc:8080/",
		"hail serve extra-argument",
	} {
		calls, err := hailCalls(docBlock{file: "t", lang: "sh", text: line})
		if err != nil || len(calls) != 1 {
			t.Fatalf("%q: %v %v", line, calls, err)
		}
		if err := checkArgs(calls[0].args); err == nil {
			t.Errorf("%q: accepted", line)
		}
	}
	calls, err := hailCalls(docBlock{file: "t", lang: "sh", text: "START=$(date +%s)\n" +
		"timeout 60 hail -z 1s --start-at $START -H 'X-A: b c' \\\n  'http://127.0.0.1:8080/?a=1&b=2' | jq . # comment\n"})
	if err != nil || len(calls) != 1 {
		t.Fatalf("%v %v", calls, err)
	}
	want := []string{"-z", "1s", "--start-at", placeholder, "-H", "X-A: b c", "http://127.0.0.1:8080/?a=1&b=2"}
	if strings.Join(calls[0].args, "|") != strings.Join(want, "|") {
		t.Errorf("parsed %q, want %q", calls[0].args, want)
	}
}

// docsShellEnv makes the test binary the runner of one docs block in a
// new network namespace: it brings loopback up and runs bash on the
// script the variable names.
const docsShellEnv = "HAIL_DOCS_SHELL"

func docsShell() int {
	if err := loopbackUp(); err != nil {
		fmt.Fprintf(os.Stderr, "docs shell: bringing lo up: %v\n", err)
		return 125
	}
	cmd := exec.Command("bash", os.Getenv(docsShellEnv))
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return 125
	}
	return 0
}

// startsServer reports whether a block starts hail serve in the background.
func startsServer(text string) bool {
	for _, l := range strings.Split(text, "\n") {
		if serveLine.MatchString(strings.TrimSpace(l)) {
			return true
		}
	}
	return false
}

var (
	runCmd    = regexp.MustCompile(`^hail run \S+`)
	zFlag     = regexp.MustCompile(`(^|\s)(-z|--duration)\s+\S+`)
	nFlag     = regexp.MustCompile(`(^|\s)(-n|--n-requests)\s+(\S+)`)
	serveLine = regexp.MustCompile(`^hail serve\b(.*)&\s*(#.*)?$`)
	addrFlag  = regexp.MustCompile(`--(addr|grpc)\s+(\S+)`)
)

// The caps of a docs block's runs (runnable): they check that each command
// runs as written, not what a long run measures, and full-speed runs cost
// the fast tier CPU by the second.
const (
	docsDuration = "100ms" // -z, but for hail run and hail demo (its shortest, 1s)
	// docsScenarioDuration is hail run's: the examples' first stage ramps
	// from no connection to 16 in 5 s, and in their first second the
	// three connections it opens run every step of their mixes.
	docsScenarioDuration = "1s"
	docsRequests         = 200 // -n
)

// capRequests caps an -n flag (nFlag's match) at docsRequests.
func capRequests(flag string) string {
	m := nFlag.FindStringSubmatch(flag)
	v, mult := m[3], 1
	switch {
	case strings.HasSuffix(v, "k"):
		v, mult = v[:len(v)-1], 1000
	case strings.HasSuffix(v, "m"):
		v, mult = v[:len(v)-1], 1000000
	}
	if n, err := strconv.Atoi(v); err == nil && n*mult <= docsRequests {
		return flag
	}
	return m[1] + m[2] + " " + strconv.Itoa(docsRequests)
}

// runnable turns a shell block into the script that runs it: hail from
// this build, durations capped at 1s (a scenario's own and hail demo's
// too, the demo on 8 connections), every other
// hail command interrupted after 3 s as Ctrl-C would (hail then reports and
// exits 0: a run of -n requests stays bounded in time), a wait for each server started
// in the background to listen, the first failure ending it, the servers
// stopped at the end. go test and go get are left out (the test is the
// first; the second needs the network).
func runnable(text string) (string, bool, error) {
	var s strings.Builder
	s.WriteString("set -euo pipefail\ntrap 'rc=$?; kill $(jobs -p) 2>/dev/null || true; exit $rc' EXIT\nlisten() { for _ in $(seq 200); do (exec 3<>/dev/tcp/${1%:*}/${1##*:}) 2>/dev/null && return; sleep 0.05; done; echo \"nothing listens on $1\" >&2; exit 1; }\n")
	s.WriteString(`started() { for _ in $(seq 200); do grep -q "^hail serve: $3" "$1" && return; kill -0 "$2" 2>/dev/null || { echo "hail serve exited: $(cat "$1")" >&2; exit 1; }; sleep 0.05; done; echo "hail serve did not start: $(cat "$1")" >&2; exit 1; }` + "\n")
	ran, servers := false, 0
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case l == "" || strings.HasPrefix(l, "#"):
			continue
		case strings.HasPrefix(l, "go test") || strings.HasPrefix(l, "go get"):
			continue
		}
		l = strings.Replace(l, "go run ./cmd/hail", "hail", 1)
		if strings.HasPrefix(l, "hail demo") && !strings.Contains(l, "--duration") {
			l = "hail demo --duration 1s --connections 8" + l[len("hail demo"):] // its two runs, capped too
		}
		capped := docsDuration
		switch {
		case strings.HasPrefix(l, "hail demo"):
			capped = "1s" // the demo's shortest
		case runCmd.MatchString(l):
			capped = docsScenarioDuration
		}
		l = zFlag.ReplaceAllString(l, "$1$2 "+capped)
		l = nFlag.ReplaceAllStringFunc(l, capRequests)
		if m := runCmd.FindString(l); m != "" && !zFlag.MatchString(l) && !strings.Contains(l, "--check") {
			l = m + " -z " + capped + l[len(m):] // a scenario's own stages, capped too
		}
		if strings.HasPrefix(l, "hail ") && !strings.HasPrefix(l, "hail serve") {
			// A run of -n requests, however long, is stopped after 3 s as
			// Ctrl-C stops it: its report written, exit 0 (the signal table).
			l = "timeout --preserve-status -s INT -k 10s 3s " + l
		}
		if strings.HasPrefix(l, "hail serve") && !serveLine.MatchString(l) {
			return "", false, fmt.Errorf("%q runs a server in the foreground: the block would never end (end it with &)", l)
		}
		ran = true
		m := serveLine.FindStringSubmatch(l)
		if m == nil {
			s.WriteString(l + "\n")
			continue
		}
		// A server in the background: its stderr to a file, and the block
		// goes on once it says it listens (a server that cannot bind, say
		// to a port another block's line took, exits: the block fails).
		servers++
		log := fmt.Sprintf("serve-%d.log", servers)
		said := "listening on"
		switch {
		case strings.Contains(m[1], "--openai"):
			said = "mock OpenAI server on"
		case strings.Contains(m[1], "--grpc"):
			said = "gRPC on"
		}
		fmt.Fprintf(&s, "hail serve%s2>%s &\nstarted %s $! '%s'\n", m[1], log, log, said)
		{
			addrs := []string{"127.0.0.1:8080"}
			if strings.Contains(m[1], "--openai") {
				addrs[0] = "127.0.0.1:8000"
			}
			for _, a := range addrFlag.FindAllStringSubmatch(m[1], -1) {
				if a[1] == "addr" {
					addrs[0] = a[2]
				} else {
					addrs = append(addrs, a[2])
				}
			}
			for _, a := range addrs {
				s.WriteString("listen " + a + "\n")
			}
		}
	}
	return s.String(), ran, nil
}

// The shell blocks of README and of docs/*.md that start their own target
// (a line "hail serve … &") run as written: each command exits 0. The
// other blocks of docs/*.md are parsed only: they need a cluster, a
// machine, files of their own or a service of the reader's. It is the docs
// tier (HAIL_DOCS=1, .ci/run): every block's runs, one a namespace, were
// the fast tier's largest test.
func TestDocsBlocksRun(t *testing.T) {
	t.Parallel()
	testtier.Require(t, testtier.Docs)
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	ran := map[string]bool{} // the commands of the blocks run, as commandLines gives them
	for _, b := range docBlocks(t, root, docFiles(t, root)) {
		if b.lang != "sh" || b.file != "README.md" && !startsServer(b.text) {
			continue
		}
		script, ok, err := runnable(b.text)
		if err != nil {
			t.Errorf("%s:%d: %v", b.file, b.line, err)
			continue
		}
		if !ok {
			continue
		}
		lines, again := commandLines(b.text), true
		for _, l := range lines {
			again = again && ran[l]
			ran[l] = true
		}
		if again { // every command of it, its servers too, ran in a block before
			t.Logf("%s:%d: every line ran in a block before", b.file, b.line)
			continue
		}
		t.Run(fmt.Sprintf("%s:%d", b.file, b.line), func(t *testing.T) {
			t.Parallel()
			if out, err := runBlock(t, root, script); err != nil {
				t.Errorf("%s:%d: %v\nscript:\n%s\noutput:\n%s", b.file, b.line, err, script, out)
			}
		})
	}
}

// commandLines are a block's commands, a line each, without comments
// and with their spaces collapsed.
func commandLines(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		l = strings.Join(strings.Fields(shellComment.ReplaceAllString(l, "")), " ")
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

// shellComment is a comment to the end of a line: a # that starts a word.
var shellComment = regexp.MustCompile(`(^|\s)#.*$`)

// runBlock runs script with bash in a new network namespace, in a
// temporary directory holding the repository's examples, with this
// build's hail first on PATH; within 90 s, its background servers killed
// at the end.
func runBlock(t *testing.T, root, script string) (string, error) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(hailBin, filepath.Join(bin, "hail")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "examples"), filepath.Join(dir, "examples")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "block.sh")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), docsShellEnv+"="+path, "PATH="+bin+":"+os.Getenv("PATH"), "NO_COLOR=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET, Setpgid: true}
	cmd.WaitDelay = 5 * time.Second // a server the script left holding the output
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) {
			t.Skipf("cannot create a network namespace here (needs CAP_SYS_ADMIN): %v", err)
		}
		t.Fatal(err)
	}
	timer := time.AfterFunc(90*time.Second, func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	err = cmd.Wait()
	timer.Stop()
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // servers left in the background
	return out.String(), err
}

// The runner fails a block in which a command exits non-zero or a
// background server cannot start (two on one port), refuses a server in
// the foreground, and caps durations.
func TestDocsRunner(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	script, ok, err := runnable("hail serve &\nhail -n 5 http://127.0.0.1:8081/   # nothing listens there: exit 3\n")
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if out, err := runBlock(t, root, script); err == nil {
		t.Errorf("a block whose command exits 3 passed:\n%s", out)
	}
	script, _, _ = runnable("hail serve &   # one\nhail serve --grpc 127.0.0.1:9090 &   # a second on 8080\n")
	if out, err := runBlock(t, root, script); err == nil || !strings.Contains(out, "hail serve exited") {
		t.Errorf("a block starting two servers on one port passed (%v):\n%s", err, out)
	}
	if got := commandLines("hail run x.yaml   # a comment\n# a line of comment\n  hail  -n 5 'http://h/#a'\n"); strings.Join(got, "|") != "hail run x.yaml|hail -n 5 'http://h/#a'" {
		t.Errorf("commandLines: %q", got)
	}
	if _, _, err := runnable("hail serve --openai --slots 4\n"); err == nil {
		t.Error("a server in the foreground accepted")
	}
	script, _, _ = runnable("hail -z 30s -q 10 http://127.0.0.1:8080/\nhail run examples/vm-lifecycle.yaml -c 4\ngo run ./cmd/hail demo   # the demo\n" +
		"hail demo --duration 5s\nhail -n 10k -c 64 http://127.0.0.1:8080/\nhail grpc -n 20 --n-requests 2m 127.0.0.1:9090\n")
	for _, want := range []string{"3s hail -z 100ms -q 10 http://127.0.0.1:8080/\n", "3s hail run examples/vm-lifecycle.yaml -z 1s -c 4\n",
		"3s hail demo --duration 1s --connections 8   # the demo\n", "3s hail demo --duration 1s\n",
		"3s hail -n 200 -c 64 http://127.0.0.1:8080/\n", "3s hail grpc -n 20 --n-requests 200 127.0.0.1:9090\n"} {
		if !strings.Contains(script, want) {
			t.Errorf("%q not in\n%s", want, script)
		}
	}
}

var (
	mdLink   = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	codePath = regexp.MustCompile("`((?:bench|deploy|docs|examples|cmd|internal|hailtest)/[A-Za-z0-9_./-]+)`")
	heading  = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
)

// slug is GitHub's anchor for a heading: lower case, punctuation dropped,
// spaces as hyphens.
func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ' || r == '-':
			b.WriteRune('-')
		case r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127 && r != '—' && r != '→' && r != '×':
			b.WriteRune(r)
		}
	}
	return b.String()
}

// The docs point only at what a clone has: every relative link names a
// file of the repository (and a heading of it, after #), every path in
// backticks under one of its top directories exists (a glob matches;
// "scenario/…" is internal/scenario's shorthand and "testdata/" is each
// package's, so neither is checked), and
// nothing points beside the repository (../shared).
func TestDocsLinks(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	anchors := map[string]map[string]bool{}
	anchorsOf := func(path string) map[string]bool {
		if a, ok := anchors[path]; ok {
			return a
		}
		a := map[string]bool{}
		if data, err := os.ReadFile(path); err == nil {
			for _, m := range heading.FindAllStringSubmatch(string(data), -1) {
				a[slug(m[1])] = true
			}
		}
		anchors[path] = a
		return a
	}
	for _, f := range docFiles(t, root) {
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		if strings.Contains(text, "../shared") {
			t.Errorf("%s points at ../shared, which a clone does not have", f)
		}
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := filepath.Join(root, f)
			if file != "" {
				path = filepath.Join(root, filepath.Dir(f), file)
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s: link to %s: no such file", f, target)
					continue
				}
			}
			if anchor != "" && strings.HasSuffix(path, ".md") && !anchorsOf(path)[anchor] {
				t.Errorf("%s: link to %s: no such heading", f, target)
			}
		}
		for _, m := range codePath.FindAllStringSubmatch(text, -1) {
			p := strings.TrimSuffix(m[1], ".")
			if strings.HasPrefix(p, "bench/out/") { // what the benchmarks write, kept out of git
				continue
			}
			matches, _ := filepath.Glob(filepath.Join(root, p))
			if len(matches) == 0 {
				t.Errorf("%s: `%s`: no such file in the repository", f, p)
			}
		}
	}
}

func TestSlug(t *testing.T) {
	t.Parallel()
	for h, want := range map[string]string{
		"What the `hail` section accounts for":                                     "what-the-hail-section-accounts-for",
		"Faults (internal/run/faults_test.go, `TestFaultSuite`, for every engine)": "faults-internalrunfaults_testgo-testfaultsuite-for-every-engine",
		"hail's own lateness":                                "hails-own-lateness",
		"A cluster on this machine: deploy/kubernetes/local": "a-cluster-on-this-machine-deploykuberneteslocal",
	} {
		if got := slug(h); got != want {
			t.Errorf("slug(%q) = %q, want %q", h, got, want)
		}
	}
}
