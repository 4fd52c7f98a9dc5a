package kube

import (
	"os/exec"
	"sort"
	"strings"
	"testing"
)

// The library (package hail, the module root) never imports Kubernetes
// code: only hail kube's own package and the command do.
func TestLibraryWithoutKubernetes(t *testing.T) {
	t.Parallel()
	for _, p := range deps(t, "github.com/hail-loadgen/hail") {
		if strings.HasPrefix(p, "k8s.io/") || strings.HasPrefix(p, "github.com/hail-loadgen/hail/internal/kube") {
			t.Errorf("package hail imports %s", p)
		}
	}
}

// The hail command links only the API groups hail kube registers (see
// scheme.go): a package's init runs in every hail run, kube or not, and
// client-go's typed clients (k8s.io/client-go/kubernetes/...) import its
// scheme of every group — linked in, they doubled hail's binary and the
// memory and start of every run.
func TestOnlyRegisteredGroups(t *testing.T) {
	t.Parallel()
	s, err := newScheme()
	if err != nil {
		t.Fatal(err)
	}
	registered := map[string]bool{}
	for _, typ := range s.AllKnownTypes() {
		registered[typ.PkgPath()] = true
	}
	var clientset, groups []string
	for _, p := range deps(t, "github.com/hail-loadgen/hail/cmd/hail") {
		switch {
		case p == "k8s.io/client-go/kubernetes" || strings.HasPrefix(p, "k8s.io/client-go/kubernetes/"):
			clientset = append(clientset, p+" (client-go's clientset: its scheme registers every API group at init)")
		case strings.HasPrefix(p, "k8s.io/api/") && !registered[p]:
			groups = append(groups, p+" (an API group hail kube does not register)")
		}
	}
	sort.Strings(clientset)
	sort.Strings(groups)
	bad := append(clientset, groups...)
	if len(bad) > 0 {
		t.Errorf("cmd/hail links Kubernetes code every hail run pays for at start (binary size, memory, init time) and hail kube does not use:\n  %s\n"+
			"talk to the cluster through internal/kube's Cluster (client.go), registering a new group's types in scheme.go, not through client-go's typed clients",
			strings.Join(bad, "\n  "))
	}
}

// deps lists the packages pkg imports, directly or not.
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	return strings.Fields(string(out))
}
