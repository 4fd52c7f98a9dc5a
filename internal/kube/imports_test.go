package kube

import (
	"os/exec"
	"strings"
	"testing"
)

// The library (package hail, the module root) never imports Kubernetes
// code: only hail kube's own package and the command do.
func TestLibraryWithoutKubernetes(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", "github.com/hail-loadgen/hail").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "k8s.io/") || strings.HasPrefix(p, "github.com/hail-loadgen/hail/internal/kube") {
			t.Errorf("package hail imports %s", p)
		}
	}
}
