package hail_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/hailtest"
	"github.com/hail-loadgen/hail/internal/testtier"
)

// A brand-new module requires github.com/hail-loadgen/hail (through a
// replace to this checkout, as a user trying a clone would), builds a
// small program with it and runs a load test against a server this test
// started (the server counts every request the program said it sent), and
// runs README's "Use from Go" test as a test of its own. Its two builds
// make it a tier of its own (testtier.Module), after the fast tier.
func TestUseFromAnotherModule(t *testing.T) {
	testtier.Require(t, testtier.Module)
	t.Parallel()
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goLine := regexp.MustCompile(`(?m)^go \S+$`).Find(gomod)
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/loadcheck\n\n" + string(goLine) + "\n\nrequire github.com/hail-loadgen/hail v0.0.0\n\n" +
			"replace github.com/hail-loadgen/hail => " + root + "\n",
		"go.sum": string(sum),
		"main.go": `package main

import (
	"context"
	"fmt"
	"os"

	"github.com/hail-loadgen/hail"
)

func main() {
	res, err := hail.Run(context.Background(), hail.Plan{URL: os.Args[1], Requests: 500, Connections: 4})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(res.Hail.Counts.Sent, res.StatusCodeDistribution["200"], res.Hail.Verdict.Bottleneck)
}
`,
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	files["readme_test.go"] = "package main\n\nimport (\n\t\"context\"\n\t\"testing\"\n\n\t\"github.com/hail-loadgen/hail\"\n" +
		"\t\"github.com/hail-loadgen/hail/hailtest\"\n)\n\n" + readmeExample(t, string(readme))
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := hailtest.NewServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "run", ".", srv.URL+"/")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("go run in a module that requires hail: %v\n%s%s", err, out, stderr)
	}
	if got := strings.Fields(string(out)); len(got) != 3 || got[0] != "500" || got[1] != "500" {
		t.Errorf("the program printed %q, want 500 sent and 500 of 200", out)
	}
	if n := srv.Stats().Requests; n != 500 {
		t.Errorf("the server answered %d requests, want 500", n)
	}
	test := exec.CommandContext(ctx, "go", "test", "-count=1", "-v", ".")
	test.Dir, test.Env = dir, cmd.Env
	if out, err := test.CombinedOutput(); err != nil || !strings.Contains(string(out), "--- PASS: TestUnderLoad") {
		t.Errorf("README's example, as a test of a module that requires hail: %v\n%s", err, out)
	}
}

// readmeExample is the Go code of README's "Use from Go".
func readmeExample(t *testing.T, readme string) string {
	_, sec, ok := strings.Cut(readme, "## Use from Go\n")
	if ok {
		_, sec, ok = strings.Cut(sec, "```go\n")
	}
	code, _, closed := strings.Cut(sec, "```")
	if !ok || !closed || !strings.Contains(code, "func Test") {
		t.Fatal("README.md has no Go test under \"## Use from Go\"")
	}
	return code
}
