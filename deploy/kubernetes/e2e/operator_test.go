//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/hail-loadgen/hail/internal/kube"
)

// TestOperatorE2E checks hail operator on a real cluster: installed with
// its Helm chart (2 replicas watching the test's namespace only, in a
// namespace enforcing the restricted standard), a HailRun of 3 shards
// ends Succeeded with the merged summary equal to what the target served;
// a HailRun with a bad image ends Failed with the cause within 30 s;
// deleting a running HailRun stops its Job; hail kube run goes to a
// HailRun; hail kube stop stops one, what it did merged; a scenario from
// a ConfigMap; the leader's pod deleted mid-run, the other replica
// adopts the run. The image hail:local must hold this tree's hail
// (deploy/kubernetes/local/README.md).
//
//	HAIL_KUBE_E2E=1 KUBECONFIG=/tmp/k8s-local/state/pki/admin.kubeconfig \
//	    go test -tags e2e ./deploy/kubernetes/e2e -run TestOperatorE2E -v -count=1 -timeout 15m
func TestOperatorE2E(t *testing.T) {
	if os.Getenv("HAIL_KUBE_E2E") == "" {
		t.Skip("HAIL_KUBE_E2E is not set: this test needs a cluster (deploy/kubernetes/local/up.sh) and minutes")
	}
	helm := os.Getenv("HELM")
	if helm == "" {
		helm = "helm"
		if _, err := exec.LookPath(helm); err != nil {
			out, _ := exec.Command("go", "env", "GOPATH").Output()
			helm = filepath.Join(strings.TrimSpace(string(out)), "bin", "helm")
		}
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(clientcmd.NewDefaultClientConfigLoadingRules(), nil).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hc, _, err := kube.Connect("", "", namespace, "hail-e2e")
	if err != nil {
		t.Fatal(err)
	}
	apiHost, apiPort := "10.99.0.1", "6443"
	if h := os.Getenv("HAIL_E2E_API_SERVER"); h != "" { // HOST:PORT as pods reach it; "-": the in-cluster Service
		apiHost, apiPort, _ = strings.Cut(h, ":")
		if h == "-" {
			apiHost, apiPort = "", ""
		}
	}
	e := &env{t: t, cs: cs, out: t.TempDir(), stamp: time.Now().Format("150405"), kubeconf: os.Getenv("KUBECONFIG")}
	e.hail = filepath.Join(e.out, "hail")
	if b, err := exec.Command("go", "build", "-o", e.hail, "../../../cmd/hail").CombinedOutput(); err != nil {
		t.Fatalf("building hail: %v\n%s", err, b)
	}
	e.operator = "auto"
	ctx := context.Background()
	e.namespace(ctx)
	e.startTarget(ctx)
	defer func() {
		fmt.Printf("e2e: %d passed, %d failed\n", e.passed, e.failed)
		for _, s := range e.summary {
			fmt.Println("e2e: " + s)
		}
	}()

	// Install: the chart, the operator in hail-system (restricted), running
	// the HailRuns of the test's namespace only.
	const opNS = "hail-system"
	nss := cs.CoreV1().Namespaces()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: opNS, Labels: map[string]string{
		"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/enforce-version": "latest"}}}
	if _, err := nss.Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	install := exec.Command(helm, "upgrade", "--install", "hail-operator", "../../helm/hail-operator", "-n", opNS,
		"--set", "namespaces={"+namespace+"}", "--set", "leaseDuration=10s", "--set", "replicas=2",
		// This cluster has no kube-proxy: pods reach the API server at its own address.
		"--set", "apiServer.host="+apiHost, "--set-string", "apiServer.port="+apiPort, "--wait", "--timeout", "3m")
	out, err := install.CombinedOutput()
	e.check(fmt.Sprintf("helm upgrade --install hail-operator (namespaces={%s}): %v", namespace, err), err == nil)
	if err != nil {
		t.Fatalf("%s", out)
	}
	// A new image under the same tag: the operator pod restarts on it.
	_ = exec.Command("kubectl", "-n", opNS, "rollout", "restart", "deployment/hail-operator").Run()
	_ = exec.Command("kubectl", "-n", opNS, "rollout", "status", "deployment/hail-operator", "--timeout=2m").Run()
	if !e.operatorLeads(ctx, opNS) {
		logs, _ := exec.Command("kubectl", "-n", opNS, "logs", "deployment/hail-operator").CombinedOutput()
		e.check("the operator runs under restricted Pod Security and leads", false)
		t.Fatalf("the operator's log:\n%s", logs)
	}
	e.check("the operator runs under restricted Pod Security and leads", true)

	e.operatorExact(ctx, hc)
	e.operatorBadImage(ctx, hc)
	e.operatorDelete(ctx, hc)
	e.kubeRunHailRun(ctx, hc)
	e.operatorStop(ctx, hc)
	e.operatorScenario(ctx, hc)
	e.operatorHandoff(ctx, hc, opNS)
	// The leader's metrics (two replicas: the Service would answer from either).
	leader := ""
	if l, err := cs.CoordinationV1().Leases(opNS).Get(ctx, "hail-operator", metav1.GetOptions{}); err == nil && l.Spec.HolderIdentity != nil {
		leader = *l.Spec.HolderIdentity
	}
	metrics, err := cs.CoreV1().Pods(opNS).ProxyGet("http", leader, "8080", "/metrics", nil).DoRaw(ctx)
	e.check(fmt.Sprintf("the leader's (%s) /metrics: it leads and counts the run it adopted (%v)", leader, err), err == nil &&
		bytes.Contains(metrics, []byte("hail_operator_leader 1")) && bytes.Contains(metrics, []byte(`hail_operator_runs_ended_total{phase="Succeeded"} 1`)))
	if lines := regexp.MustCompile(`(?m)^hail_operator_.*$`).FindAll(metrics, -1); len(lines) > 0 {
		fmt.Printf("e2e: the operator's metrics:\n%s\n", bytes.Join(lines, []byte("\n")))
	}
	if logs, err := exec.Command("kubectl", "-n", opNS, "logs", "deployment/hail-operator").CombinedOutput(); err == nil {
		fmt.Printf("e2e: the operator's log:\n%s\n", logs)
	}
	if os.Getenv("KEEP") == "" { // hail kube run goes to HailRuns while the CRD is served
		_ = exec.Command(helm, "uninstall", "hail-operator", "-n", opNS, "--wait").Run()
		_ = exec.Command("kubectl", "delete", "crd", "hailruns.hail-loadgen.github.io").Run()
	}
}

// kubeRunHailRun: hail kube run, on a cluster with the operator, runs as a
// HailRun: the merged result written here, == what the target served.
func (e *env) kubeRunHailRun(ctx context.Context, hc kube.Cluster) {
	run := e.name("opkube")
	before := e.served(ctx)
	r := e.kube(run, append([]string{"run", "--shards", "2", "--run", run, "--cpu", "100m", "--memory", "128Mi", "--"}, append(load, e.url)...)...)
	after := e.served(ctx)
	show(r)
	var hr kube.HailRun
	err := hc.Get(ctx, kube.HailRuns, namespace, run, &hr)
	e.check(fmt.Sprintf("%s: hail kube run (--operator auto) made HailRun %s, phase %s: %v", run, run, hr.Status.Phase, err), err == nil && hr.Status.Phase == kube.PhaseSucceeded &&
		strings.Contains(r.stderr, "HailRun hail-e2e/"+run))
	if r.merged == nil {
		e.check(run+": a merged result written here", false)
		return
	}
	c := r.merged.Hail.Counts
	e.check(fmt.Sprintf("%s: exit %d; merged %d == served %d, errors %d; the report printed", run, r.code, c.Requests, after-before, c.Errors),
		r.code == 0 && c.Requests == after-before && c.Requests > 0 && c.Errors == 0 && strings.Contains(r.stdout, "Merged:"))
	e.summary = append(e.summary, fmt.Sprintf("hail kube run with the operator installed: HailRun %s, exit %d, merged %d = served %d", run, r.code, c.Requests, after-before))
	_ = hc.Delete(ctx, kube.HailRuns, namespace, run, metav1.DeleteOptions{})
}

// operatorLeads waits until a running operator pod (not one going away
// after a restart) holds the Lease.
func (e *env) operatorLeads(ctx context.Context, opNS string) bool {
	for end := time.Now().Add(2 * time.Minute); time.Now().Before(end); time.Sleep(time.Second) {
		l, err := e.cs.CoordinationV1().Leases(opNS).Get(ctx, "hail-operator", metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil {
			continue
		}
		p, err := e.cs.CoreV1().Pods(opNS).Get(ctx, *l.Spec.HolderIdentity, metav1.GetOptions{})
		if err == nil && p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning {
			fmt.Printf("e2e: the Lease is held by %s (running)\n", p.Name)
			return true
		}
	}
	return false
}

// createRun makes a HailRun.
func (e *env) createRun(ctx context.Context, hc kube.Cluster, name string, spec kube.HailRunSpec) {
	hr := &kube.HailRun{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}, Spec: spec}
	if err := hc.Create(ctx, kube.HailRuns, namespace, hr); err != nil {
		e.t.Fatalf("creating HailRun %s: %v", name, err)
	}
}

// waitRun waits until the HailRun is in one of phases (or limit passes).
func (e *env) waitRun(ctx context.Context, hc kube.Cluster, name string, limit time.Duration, phases ...string) *kube.HailRun {
	var hr kube.HailRun
	for end := time.Now().Add(limit); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		hr = kube.HailRun{}
		if err := hc.Get(ctx, kube.HailRuns, namespace, name, &hr); err != nil {
			continue
		}
		for _, p := range phases {
			if hr.Status.Phase == p {
				return &hr
			}
		}
	}
	return &hr
}

// kubectlGet prints kubectl's table of the HailRun (the printer columns).
func kubectlGet(name string, wide bool) string {
	args := []string{"-n", namespace, "get", "hailrun", name}
	if wide {
		args = append(args, "-o", "wide")
	}
	out, _ := exec.Command("kubectl", args...).CombinedOutput()
	fmt.Printf("e2e: kubectl %s\n%s", strings.Join(args, " "), out)
	return string(out)
}

// small is the shards' pod on this 2-CPU node: 100m of CPU requested, 128Mi.
var small = kube.RunnerTemplate{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: mustQuantity("100m")},
	Limits: corev1.ResourceList{corev1.ResourceMemory: mustQuantity("128Mi")}}}

// operatorExact: a HailRun of 3 shards ends Succeeded, every shard
// complete, the merged summary == what the target served; the full result
// in its ConfigMap; the Job gone (cleanup Delete).
func (e *env) operatorExact(ctx context.Context, hc kube.Cluster) {
	name := e.name("op3")
	before := e.served(ctx)
	t0 := time.Now()
	e.createRun(ctx, hc, name, kube.HailRunSpec{Shards: 3, Args: append(append([]string{}, load...), e.url),
		Runner:     small,
		Thresholds: []string{"error_rate < 1%"}})
	hr := e.waitRun(ctx, hc, name, 3*time.Minute, kube.PhaseSucceeded, kube.PhaseFailed)
	after := e.served(ctx)
	table := kubectlGet(name, true)
	st := hr.Status
	e.check(fmt.Sprintf("%s: phase %s after %s (want Succeeded): %s", name, st.Phase, time.Since(t0).Round(time.Second), st.Message), st.Phase == kube.PhaseSucceeded)
	if st.Summary == nil {
		e.check(name+": a merged summary in the status", false)
		return
	}
	complete := 0
	for _, s := range st.Shards {
		if s.State == kube.ShardComplete {
			complete++
		}
	}
	e.check(fmt.Sprintf("%s: status.summary.requests %d == served %d, errors %d; %d of 3 shards Complete; verdict %s", name, st.Summary.Requests, after-before, st.Summary.Errors, complete, st.Verdict.Bottleneck),
		st.Summary.Requests == after-before && st.Summary.Requests > 0 && st.Summary.Errors == 0 && complete == 3 && len(st.Shards) == 3)
	e.check(fmt.Sprintf("%s: kubectl get shows phase, shards, requests/s, p99 and verdict", name),
		strings.Contains(table, "Succeeded") && strings.Contains(table, st.Summary.RequestsPerSecond) && strings.Contains(table, st.Summary.P99) && strings.Contains(table, "REQUESTS/S"))
	var cm corev1.ConfigMap
	err := hc.Get(ctx, kube.ConfigMaps, namespace, name+"-result", &cm)
	e.check(fmt.Sprintf("%s: the full result in ConfigMap %s (%d bytes gzipped): %v", name, name+"-result", len(cm.BinaryData["total.json.gz"]), err),
		err == nil && st.Result != nil && st.Result.ConfigMap == name+"-result" && len(cm.BinaryData["total.json.gz"]) > 0)
	e.check(name+": the Job and the run's ConfigMap deleted once merged (cleanup Delete)", e.jobGone(ctx, name))
	e.summary = append(e.summary, fmt.Sprintf("HailRun of 3 shards: %s in %s; summary requests %d = served %d, %s req/s, p99 %s, verdict %s; thresholds %+v",
		st.Phase, time.Since(t0).Round(time.Second), st.Summary.Requests, after-before, st.Summary.RequestsPerSecond, st.Summary.P99, st.Verdict.Bottleneck, st.Thresholds))
	_ = hc.Delete(ctx, kube.HailRuns, namespace, name, metav1.DeleteOptions{})
}

// operatorBadImage: a HailRun whose image cannot be pulled ends Failed,
// with the cluster's reason, within 30 s; nothing left.
func (e *env) operatorBadImage(ctx context.Context, hc kube.Cluster) {
	name := e.name("opimg")
	t0 := time.Now()
	e.createRun(ctx, hc, name, kube.HailRunSpec{Shards: 2, Image: "hail:nope", Args: append(append([]string{}, load...), e.url), Runner: small})
	hr := e.waitRun(ctx, hc, name, time.Minute, kube.PhaseFailed, kube.PhaseSucceeded)
	took := time.Since(t0)
	kubectlGet(name, true)
	e.check(fmt.Sprintf("%s: Failed after %s (want < 30s): %s", name, took.Round(100*time.Millisecond), hr.Status.Message),
		hr.Status.Phase == kube.PhaseFailed && took < 30*time.Second && regexp.MustCompile(`cannot start: (ErrImagePull|ImagePullBackOff): .*hail:nope`).MatchString(hr.Status.Message))
	e.check(name+": the Job and ConfigMap deleted", e.jobGone(ctx, name))
	e.summary = append(e.summary, fmt.Sprintf("HailRun with image hail:nope: %s after %s: %s", hr.Status.Phase, took.Round(100*time.Millisecond), hr.Status.Message))
	_ = hc.Delete(ctx, kube.HailRuns, namespace, name, metav1.DeleteOptions{})
}

// operatorDelete: deleting a running HailRun stops its Job: the Job and
// its pods go, and the target is sent nothing more.
func (e *env) operatorDelete(ctx context.Context, hc kube.Cluster) {
	name := e.name("opdel")
	e.createRun(ctx, hc, name, kube.HailRunSpec{Shards: 2, Args: []string{"-z", "60s", "-q", "500", "-c", "4", e.url}, Runner: small})
	hr := e.waitRun(ctx, hc, name, 2*time.Minute, kube.PhaseRunning)
	if hr.Status.Phase != kube.PhaseRunning {
		e.check(fmt.Sprintf("%s: Running (is %s: %s)", name, hr.Status.Phase, hr.Status.Message), false)
		return
	}
	time.Sleep(3 * time.Second)
	t0 := time.Now()
	if err := hc.Delete(ctx, kube.HailRuns, namespace, name, metav1.DeleteOptions{}); err != nil {
		e.t.Fatal(err)
	}
	gone := false
	for end := time.Now().Add(60 * time.Second); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		_, jerr := e.cs.BatchV1().Jobs(namespace).Get(ctx, name, metav1.GetOptions{})
		pods, perr := e.cs.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: kube.LabelRun + "=" + name})
		if apierrors.IsNotFound(jerr) && perr == nil && len(pods.Items) == 0 {
			gone = true
			break
		}
	}
	took := time.Since(t0)
	a := e.served(ctx)
	time.Sleep(3 * time.Second)
	b := e.served(ctx)
	e.check(fmt.Sprintf("%s: deleted while Running: its Job and pods gone after %s; the target served %d in the 3 s after", name, took.Round(100*time.Millisecond), b-a), gone && b == a)
	e.summary = append(e.summary, fmt.Sprintf("HailRun deleted 3 s into a 60 s run: Job and pods gone after %s, nothing served after", took.Round(100*time.Millisecond)))
}

// operatorStop: the stop annotation (what hail kube stop sets) stops a
// running HailRun's shards; what they did is merged, == served; the run
// is Failed, incomplete, each shard Interrupted.
func (e *env) operatorStop(ctx context.Context, hc kube.Cluster) {
	name := e.name("opstop")
	before := e.served(ctx)
	e.createRun(ctx, hc, name, kube.HailRunSpec{Shards: 2, Args: []string{"-z", "60s", "-q", "500", "-c", "4", e.url}, Runner: small})
	if hr := e.waitRun(ctx, hc, name, 2*time.Minute, kube.PhaseRunning); hr.Status.Phase != kube.PhaseRunning {
		e.check(fmt.Sprintf("%s: Running (is %s: %s)", name, hr.Status.Phase, hr.Status.Message), false)
		return
	}
	time.Sleep(3 * time.Second)
	out, err := exec.Command(e.hail, "kube", "stop", name, "-n", namespace).CombinedOutput()
	e.check(fmt.Sprintf("%s: hail kube stop on a HailRun: %v (%s)", name, err, strings.TrimSpace(string(out))), err == nil)
	hr := e.waitRun(ctx, hc, name, time.Minute, kube.PhaseFailed, kube.PhaseSucceeded)
	after := e.served(ctx)
	interrupted := 0
	for _, s := range hr.Status.Shards {
		if s.State == kube.ShardInterrupted {
			interrupted++
		}
	}
	var got int64
	if hr.Status.Summary != nil {
		got = hr.Status.Summary.Requests
	}
	e.check(fmt.Sprintf("%s: stopped: %s (%s); merged %d == served %d; %d of 2 shards Interrupted", name, hr.Status.Phase, hr.Status.Message, got, after-before, interrupted),
		hr.Status.Phase == kube.PhaseFailed && got == after-before && got > 0 && interrupted == 2)
	e.summary = append(e.summary, fmt.Sprintf("HailRun stopped (hail kube stop) 3 s into -z 60s: %s, merged %d = served %d, both shards Interrupted", hr.Status.Phase, got, after-before))
	_ = hc.Delete(ctx, kube.HailRuns, namespace, name, metav1.DeleteOptions{})
}

// operatorScenario: a HailRun of a scenario from a ConfigMap (a feed
// beside it): validated by the operator from a copy, run from the
// ConfigMap mounted at /hail/scenario; every row used once.
func (e *env) operatorScenario(ctx context.Context, hc kube.Cluster) {
	name := e.name("opscn")
	var rows strings.Builder
	rows.WriteString("id\n")
	for i := range 600 {
		fmt.Fprintf(&rows, "%d\n", i)
	}
	scn := fmt.Sprintf("name: signup\nbase: %s\nconnections: 2\nrequests: 600\nfeeds:\n  users: {file: users.csv, order: unique}\nsteps:\n  - {name: signup, method: POST, path: '/users/{{feed.users.id}}', body: 'x'}\n", strings.TrimSuffix(e.url, "/"))
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name + "-scn", Namespace: namespace}, Data: map[string]string{"signup.yaml": scn, "users.csv": rows.String()}}
	if err := hc.Create(ctx, kube.ConfigMaps, namespace, cm); err != nil {
		e.t.Fatal(err)
	}
	before := e.served(ctx)
	e.createRun(ctx, hc, name, kube.HailRunSpec{Shards: 2, Scenario: &kube.ScenarioSource{ConfigMap: name + "-scn", File: "signup.yaml"}, Runner: small})
	hr := e.waitRun(ctx, hc, name, 3*time.Minute, kube.PhaseSucceeded, kube.PhaseFailed)
	after := e.served(ctx)
	var got int64
	if hr.Status.Summary != nil {
		got = hr.Status.Summary.Requests
	}
	e.check(fmt.Sprintf("%s: a scenario from ConfigMap %s: %s (%s); merged %d == rows 600 == served %d", name, name+"-scn", hr.Status.Phase, hr.Status.Message, got, after-before),
		hr.Status.Phase == kube.PhaseSucceeded && got == 600 && after-before == 600)
	e.summary = append(e.summary, fmt.Sprintf("HailRun of a scenario from a ConfigMap (unique feed of 600 rows): %s, merged %d = served %d", hr.Status.Phase, got, after-before))
	_ = hc.Delete(ctx, kube.HailRuns, namespace, name, metav1.DeleteOptions{})
	_ = hc.Delete(ctx, kube.ConfigMaps, namespace, name+"-scn", metav1.DeleteOptions{})
}

// operatorHandoff: with two replicas, the leader's pod deleted while a
// HailRun runs: the other replica takes the Lease, adopts the run and
// merges it; merged == served.
func (e *env) operatorHandoff(ctx context.Context, hc kube.Cluster, opNS string) {
	name := e.name("opho")
	before := e.served(ctx)
	e.createRun(ctx, hc, name, kube.HailRunSpec{Shards: 2, Args: []string{"-z", "20s", "-q", "500", "-c", "4", e.url}, Runner: small})
	if hr := e.waitRun(ctx, hc, name, 2*time.Minute, kube.PhaseRunning); hr.Status.Phase != kube.PhaseRunning {
		e.check(fmt.Sprintf("%s: Running (is %s: %s)", name, hr.Status.Phase, hr.Status.Message), false)
		return
	}
	l, err := e.cs.CoordinationV1().Leases(opNS).Get(ctx, "hail-operator", metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil {
		e.t.Fatalf("the Lease: %v", err)
	}
	old := *l.Spec.HolderIdentity
	time.Sleep(2 * time.Second)
	if err := e.cs.CoreV1().Pods(opNS).Delete(ctx, old, metav1.DeleteOptions{}); err != nil {
		e.t.Fatal(err)
	}
	hr := e.waitRun(ctx, hc, name, 3*time.Minute, kube.PhaseSucceeded, kube.PhaseFailed)
	after := e.served(ctx)
	l, _ = e.cs.CoordinationV1().Leases(opNS).Get(ctx, "hail-operator", metav1.GetOptions{})
	holder := ""
	if l != nil && l.Spec.HolderIdentity != nil {
		holder = *l.Spec.HolderIdentity
	}
	var got int64
	if hr.Status.Summary != nil {
		got = hr.Status.Summary.Requests
	}
	e.check(fmt.Sprintf("%s: the leader %s deleted mid-run; %s leads and merged it: %s, %d == served %d", name, old, holder, hr.Status.Phase, got, after-before),
		holder != "" && holder != old && hr.Status.Phase == kube.PhaseSucceeded && got == after-before && got == 10000)
	e.summary = append(e.summary, fmt.Sprintf("leader pod deleted 2 s into a 20 s HailRun: %s took over, %s, merged %d = served %d", holder, hr.Status.Phase, got, after-before))
	_ = hc.Delete(ctx, kube.HailRuns, namespace, name, metav1.DeleteOptions{})
}
