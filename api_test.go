package hail_test

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/api.txt, the public API, after a deliberate change")

// The public API (go doc -all of the public packages) is testdata/api.txt:
// a change to it is a visible diff, made deliberately with
// go test -run TestAPI -update.
func TestAPI(t *testing.T) {
	t.Parallel()
	var all bytes.Buffer
	for _, pkg := range []string{".", "./hailtest", "./scenario", "./result"} {
		out, err := exec.Command("go", "doc", "-all", pkg).Output()
		if err != nil {
			t.Fatalf("go doc -all %s: %v", pkg, err)
		}
		all.WriteString("==== go doc -all " + pkg + "\n")
		all.Write(out)
	}
	const golden = "testdata/api.txt"
	if *update {
		if err := os.WriteFile(golden, all.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(all.Bytes(), want) {
		t.Errorf("the public API differs from %s:\n%s\nIf the change is deliberate: go test -run TestAPI -update", golden, firstDiff(all.Bytes(), want))
	}
}
