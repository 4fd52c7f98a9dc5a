package kube

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"
)

const (
	chartDir  = "../../deploy/helm/hail-operator"
	plainFile = "../../deploy/kubernetes/operator/hail-operator.yaml"
)

// jsonFields are the JSON names of a struct type's fields.
func jsonFields(t reflect.Type) []string {
	var out []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func props(t *testing.T, schema map[string]any, path ...string) map[string]any {
	t.Helper()
	cur := schema
	for _, p := range path {
		next, ok := cur["properties"].(map[string]any)[p].(map[string]any)
		if !ok {
			t.Fatalf("the CRD's schema has no %s", strings.Join(path, "."))
		}
		if items, ok := next["items"].(map[string]any); ok {
			next = items
		}
		cur = next
	}
	out, _ := cur["properties"].(map[string]any)
	return out
}

// The CRD's schema names exactly the Go types' fields (a field added to
// one and not the other would be pruned by the API server, or never
// set), and its printer columns read fields that exist.
func TestCRDMatchesTypes(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(chartDir, "crds/hailruns.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var crd map[string]any
	if err := yaml.Unmarshal(b, &crd); err != nil {
		t.Fatal(err)
	}
	spec := crd["spec"].(map[string]any)
	if spec["group"] != HailRunGroup.Group || crd["metadata"].(map[string]any)["name"] != HailRuns.Resource+"."+HailRunGroup.Group {
		t.Fatalf("group %v", spec["group"])
	}
	v := spec["versions"].([]any)[0].(map[string]any)
	if v["name"] != HailRunGroup.Version {
		t.Fatalf("version %v", v["name"])
	}
	schema := v["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any)
	for _, tc := range []struct {
		path []string
		typ  any
	}{
		{[]string{"spec"}, HailRunSpec{}},
		{[]string{"spec", "scenario"}, ScenarioSource{}},
		{[]string{"spec", "runner"}, RunnerTemplate{}},
		{[]string{"spec", "results"}, ResultsSink{}},
		{[]string{"status"}, HailRunStatus{}},
		{[]string{"status", "shards"}, ShardStatus{}},
		{[]string{"status", "summary"}, RunSummary{}},
		{[]string{"status", "verdict"}, RunVerdict{}},
		{[]string{"status", "thresholds"}, ThresholdStatus{}},
		{[]string{"status", "result"}, ResultRef{}},
	} {
		got, want := keys(props(t, schema, tc.path...)), jsonFields(reflect.TypeOf(tc.typ))
		if !slices.Equal(got, want) {
			t.Errorf("the CRD's %s: %q; the Go type's fields: %q", strings.Join(tc.path, "."), got, want)
		}
	}
	var cols []string
	for _, c := range v["additionalPrinterColumns"].([]any) {
		c := c.(map[string]any)
		cols = append(cols, c["name"].(string))
		path := strings.Split(strings.TrimPrefix(c["jsonPath"].(string), "."), ".")
		if path[0] != "metadata" {
			if _, ok := props(t, schema, path[:len(path)-1]...)[path[len(path)-1]]; !ok {
				t.Errorf("printer column %v reads %v: no such field", c["name"], c["jsonPath"])
			}
		}
	}
	for _, want := range []string{"Phase", "Shards", "Requests/s", "P99", "Verdict"} {
		if !slices.Contains(cols, want) {
			t.Errorf("no printer column %s: %q", want, cols)
		}
	}
}

// helm finds the helm command, for the chart's tests: $HELM, then PATH,
// then Go's bin directory (go install helm.sh/helm/v3/cmd/helm@v3.22.0).
func helm(t *testing.T) string {
	t.Helper()
	for _, c := range []string{os.Getenv("HELM"), "helm"} {
		if c == "" {
			continue
		}
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		p := filepath.Join(strings.TrimSpace(string(out)), "bin", "helm")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if os.Getenv("HAIL_HELM") != "" {
		t.Fatal("HAIL_HELM is set but there is no helm: go install helm.sh/helm/v3/cmd/helm@v3.22.0")
	}
	t.Skip("no helm (go install helm.sh/helm/v3/cmd/helm@v3.22.0; .ci/run does, and sets HAIL_HELM)")
	return ""
}

func render(t *testing.T, h string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(h, append([]string{"template", "hail-operator", chartDir, "--namespace", "hail-system", "--include-crds"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, stderr.String())
	}
	return out
}

// objects splits a rendering into its objects' kind/namespace/name.
func objects(t *testing.T, b []byte) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for doc := range strings.SplitSeq(string(b), "\n---\n") {
		var m struct {
			Kind     string `json:"kind"`
			Metadata struct{ Name, Namespace string }
		}
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatalf("%v in:\n%s", err, doc)
		}
		if m.Kind != "" {
			out[m.Kind+"/"+m.Metadata.Namespace+"/"+m.Metadata.Name] = []byte(doc)
		}
	}
	return out
}

// The chart lints and renders; the plain manifests are its rendering
// with the default values; the operator's pod passes the restricted Pod
// Security Standard; with namespaces, it is given a Role in each and no
// ClusterRole over HailRuns.
func TestChartRenders(t *testing.T) {
	t.Parallel()
	h := helm(t)
	if out, err := exec.Command(h, "lint", "--strict", chartDir).CombinedOutput(); err != nil {
		t.Fatalf("helm lint: %v\n%s", err, out)
	}
	def := render(t, h)
	plain, err := os.ReadFile(plainFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(def, plain) {
		t.Errorf("%s is not the chart's rendering: helm template hail-operator deploy/helm/hail-operator --namespace hail-system --include-crds > %s", plainFile, strings.TrimPrefix(plainFile, "../../"))
	}
	objs := objects(t, def)
	var d appsv1.Deployment
	if err := yaml.Unmarshal(objs["Deployment/hail-system/hail-operator"], &d); err != nil {
		t.Fatal(err)
	}
	if bad := restrictedProblems(t, &d.Spec.Template.ObjectMeta, &d.Spec.Template.Spec); len(bad) > 0 {
		t.Errorf("the operator's pod: %q", bad)
	}
	if args := d.Spec.Template.Spec.Containers[0].Args; !slices.Contains(args, "--image=hail:local") || args[0] != "operator" {
		t.Errorf("args %q", args)
	}
	for _, want := range []string{"ClusterRole//hail-operator", "ClusterRoleBinding//hail-operator", "Role/hail-system/hail-operator-lease", "CustomResourceDefinition//hailruns.hail-loadgen.github.io", "ServiceAccount/hail-system/hail-operator"} {
		if objs[want] == nil {
			t.Errorf("the default rendering lacks %s", want)
		}
	}
	scoped := objects(t, render(t, h, "--set", "namespaces={load,perf}", "--set", "shardImage=registry.example/hail:v1"))
	for _, want := range []string{"Role/load/hail-operator", "RoleBinding/load/hail-operator", "Role/perf/hail-operator", "RoleBinding/perf/hail-operator"} {
		if scoped[want] == nil {
			t.Errorf("with namespaces, the rendering lacks %s", want)
		}
	}
	if scoped["ClusterRole//hail-operator"] != nil {
		t.Error("with namespaces, the operator still gets a ClusterRole over HailRuns")
	}
	if err := yaml.Unmarshal(scoped["Deployment/hail-system/hail-operator"], &d); err != nil {
		t.Fatal(err)
	}
	if args := d.Spec.Template.Spec.Containers[0].Args; !slices.Contains(args, "--namespaces=load,perf") || !slices.Contains(args, "--image=registry.example/hail:v1") {
		t.Errorf("args %q", args)
	}
}
