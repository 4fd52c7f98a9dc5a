//go:build e2e

// Package e2e checks hail kube end to end on a real Kubernetes cluster
// (deploy/kubernetes/local/up.sh builds one on this machine):
//
//	HAIL_KUBE_E2E=1 KUBECONFIG=/tmp/k8s-local/state/pki/admin.kubeconfig \
//	    go test -tags e2e ./deploy/kubernetes/e2e -v -count=1 -timeout 20m
//
// In a namespace that enforces the restricted Pod Security Standard it
// starts hail serve as a pod (the target: load goes only to pods of the
// cluster) and checks, against the target's own count of what it served:
// runs of 2 and 3 shards exact; a shard deleted mid-run interrupted, its
// partial result merged; a bad image failing within 30 s with the cause
// and nothing left; Ctrl-C on a terminal, detach, and collect; stop and
// collect; a scenario with a data file too large for a ConfigMap, shipped
// on the results volume, its unique feed split among the shards. Each
// check prints a line (e2e: ok / e2e: FAIL). Without HAIL_KUBE_E2E it is
// skipped: it needs a cluster, the image hail:local built from this tree,
// and minutes.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/hail-loadgen/hail/internal/report"
	"github.com/hail-loadgen/hail/result"
)

const (
	namespace = "hail-e2e"
	target    = "hail-serve-e2e"
	image     = "hail:local"
	claim     = "hail-results"
)

// env is the cluster and the checks' tally.
type env struct {
	t        *testing.T
	cs       *kubernetes.Clientset
	hail     string // the hail binary built from this tree
	out      string
	url      string // the target's
	grpc     string // the target's gRPC HOST:PORT
	passed   int
	failed   int
	stamp    string
	mu       sync.Mutex
	summary  []string
	kubeconf string
	operator string // hail kube run's --operator ("": never: TestE2E checks hail kube's own Job)
}

// kubeArgs are hail kube's arguments for subcommand sub: the namespace,
// --out, and for run, --operator.
func (e *env) kubeArgs(sub string) []string {
	all := []string{"kube", sub, "-n", namespace, "--out", e.out}
	if sub == "run" {
		op := e.operator
		if op == "" {
			op = "never"
		}
		all = append(all, "--operator", op)
	}
	return all
}

func (e *env) check(what string, ok bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if ok {
		e.passed++
		fmt.Println("e2e: ok    " + what)
	} else {
		e.failed++
		fmt.Println("e2e: FAIL  " + what)
		e.t.Fail()
	}
}

func TestE2E(t *testing.T) {
	if os.Getenv("HAIL_KUBE_E2E") == "" {
		t.Skip("HAIL_KUBE_E2E is not set: this test needs a cluster (deploy/kubernetes/local/up.sh) and minutes")
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(clientcmd.NewDefaultClientConfigLoadingRules(), nil).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, cs: cs, out: t.TempDir(), stamp: time.Now().Format("150405"), kubeconf: os.Getenv("KUBECONFIG")}
	e.hail = filepath.Join(e.out, "hail")
	if b, err := exec.Command("go", "build", "-o", e.hail, "../../../cmd/hail").CombinedOutput(); err != nil {
		t.Fatalf("building hail: %v\n%s", err, b)
	}
	ctx := context.Background()
	e.namespace(ctx)
	e.startTarget(ctx)
	defer func() {
		if os.Getenv("KEEP") == "" {
			_ = cs.CoreV1().Pods(namespace).Delete(ctx, target, metav1.DeleteOptions{})
		}
		fmt.Printf("e2e: %d passed, %d failed (results in %s)\n", e.passed, e.failed, e.out)
		for _, s := range e.summary {
			fmt.Println("e2e: " + s)
		}
	}()
	for _, n := range []int{2, 3} {
		e.exact(ctx, n)
	}
	e.deleted(ctx)
	e.badImage(ctx)
	e.detach(ctx)
	e.stop(ctx)
	e.scenario(ctx)
	e.grpcRun(ctx)
}

// namespace makes the test's namespace enforce the restricted standard,
// and checks it does: a root pod is refused.
func (e *env) namespace(ctx context.Context) {
	nss := e.cs.CoreV1().Namespaces()
	ns, err := nss.Get(ctx, namespace, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		ns, err = nss.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{})
	}
	if err != nil {
		e.t.Fatal(err)
	}
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	ns.Labels["pod-security.kubernetes.io/enforce"] = "restricted"
	ns.Labels["pod-security.kubernetes.io/enforce-version"] = "latest"
	if _, err := nss.Update(ctx, ns, metav1.UpdateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	root := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pss-probe"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox:1.36"}}}}
	_, err = e.cs.CoreV1().Pods(namespace).Create(ctx, root, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	msg := fmt.Sprint(err)
	e.check(fmt.Sprintf("namespace %s enforces restricted: a root pod is refused (%.90s…)", namespace, msg), strings.Contains(msg, `violates PodSecurity "restricted:latest"`))
	// The results claim (this cluster's hostPath volume, owned by uid 65532).
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: claim}, Spec: corev1.PersistentVolumeClaimSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}, StorageClassName: ptr.To(""), VolumeName: "hail-results-pv",
		Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: mustQuantity("1Gi")}}}}
	if _, err := e.cs.CoreV1().PersistentVolumeClaims(namespace).Create(ctx, pvc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		e.t.Fatal(err)
	}
}

// startTarget starts hail serve as a pod and waits until it is ready.
func (e *env) startTarget(ctx context.Context) {
	pods := e.cs.CoreV1().Pods(namespace)
	_ = pods.Delete(ctx, target, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	for end := time.Now().Add(60 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		if _, err := pods.Get(ctx, target, metav1.GetOptions{}); apierrors.IsNotFound(err) {
			break
		} else if time.Now().After(end) {
			e.t.Fatal("the old target pod does not go")
		}
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: target, Labels: map[string]string{"app.kubernetes.io/name": "hail-serve"}},
		Spec: corev1.PodSpec{
			AutomountServiceAccountToken: ptr.To(false), TerminationGracePeriodSeconds: ptr.To[int64](5),
			SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](65532), RunAsGroup: ptr.To[int64](65532),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			Containers: []corev1.Container{{
				Name: "serve", Image: image, ImagePullPolicy: corev1.PullIfNotPresent, Args: []string{"serve", "--addr=0.0.0.0:8080", "--grpc=0.0.0.0:9090"},
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}, {Name: "grpc", ContainerPort: 9090}},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}},
					PeriodSeconds: 1},
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: mustQuantity("250m"), corev1.ResourceMemory: mustQuantity("64Mi")},
					Limits: corev1.ResourceList{corev1.ResourceMemory: mustQuantity("256Mi")}},
				SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
					Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
			}},
		},
	}
	if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	for end := time.Now().Add(2 * time.Minute); ; time.Sleep(500 * time.Millisecond) {
		p, err := pods.Get(ctx, target, metav1.GetOptions{})
		if err == nil {
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
					e.url = "http://" + p.Status.PodIP + ":8080/"
					e.grpc = p.Status.PodIP + ":9090"
					fmt.Printf("e2e: target %s at %s (a pod of this cluster); results in %s\n", target, e.url, e.out)
					return
				}
			}
		}
		if time.Now().After(end) {
			e.t.Fatalf("the target pod is not ready: %v", err)
		}
	}
}

// served is the target's own count of the requests it served (its
// /stats, through the API server's pod proxy).
func (e *env) served(ctx context.Context) int64 {
	b, err := e.cs.CoreV1().Pods(namespace).ProxyGet("http", target, "8080", "/stats", nil).DoRaw(ctx)
	if err != nil {
		e.t.Fatalf("the target's /stats: %v", err)
	}
	var st struct{ Requests int64 }
	if err := json.Unmarshal(b, &st); err != nil {
		e.t.Fatal(err)
	}
	return st.Requests
}

// kubeRun is one hail kube command's end.
type kubeRun struct {
	code           int
	stdout, stderr string
	took           time.Duration
	merged         *result.Result
	shards         []*result.Result
	dir            string
}

// kube runs hail kube with args (namespace and --out added) and reads what
// the run left in its directory.
func (e *env) kube(run string, args ...string) kubeRun {
	all := append(e.kubeArgs(args[0]), args[1:]...)
	cmd := exec.Command(e.hail, all...)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	t0 := time.Now()
	err := cmd.Run()
	r := kubeRun{stdout: so.String(), stderr: se.String(), took: time.Since(t0), dir: filepath.Join(e.out, run)}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatal(err)
	}
	e.read(&r)
	return r
}

func (e *env) read(r *kubeRun) {
	r.merged = readResult(filepath.Join(r.dir, "total.json"))
	for i := 0; ; i++ {
		s := readResult(filepath.Join(r.dir, fmt.Sprintf("shard-%d.json", i)))
		if s == nil {
			if _, err := os.Stat(filepath.Join(r.dir, fmt.Sprintf("shard-%d.log", i))); err == nil {
				r.shards = append(r.shards, nil)
				continue
			}
			break
		}
		r.shards = append(r.shards, s)
	}
}

func readResult(path string) *result.Result {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	r, err := result.ReadJSON(f)
	if err != nil {
		return nil
	}
	return r
}

// show prints hail kube's own lines of a run, indented.
func show(r kubeRun) {
	for _, l := range strings.Split(strings.TrimSpace(r.stderr), "\n") {
		if strings.HasPrefix(l, "hail kube:") || strings.HasPrefix(l, "hail:") {
			fmt.Println("    | " + l)
		}
	}
}

// sumShards is the requests the shards' results hold.
func sumShards(r kubeRun) int64 {
	var n int64
	for _, s := range r.shards {
		if s != nil {
			n += s.Hail.Counts.Requests
		}
	}
	return n
}

// woke is the latest a shard began sending after the agreed start
// (hail.shard.late_ns): its wake-up, which its own lateness includes.
func woke(r kubeRun) time.Duration {
	var w int64
	for _, s := range r.shards {
		if s != nil && s.Hail.Shard != nil {
			w = max(w, int64(s.Hail.Shard.Late))
		}
	}
	return time.Duration(w)
}

// spread is how far apart the shards' schedules started (their
// start_unix_nano: the agreed start, for shards that woke within a second
// of it).
func spread(r kubeRun) time.Duration {
	lo, hi := int64(math.MaxInt64), int64(0)
	for _, s := range r.shards {
		if s != nil {
			lo, hi = min(lo, s.Hail.Start.UnixNano()), max(hi, s.Hail.Start.UnixNano())
		}
	}
	return time.Duration(hi - lo)
}

// aligned checks each merged second is the sum of the shards' seconds
// that fall in it by wall clock, and the seconds add up to the count.
func aligned(r kubeRun) bool {
	if r.merged == nil {
		return false
	}
	t0 := int64(math.MaxInt64)
	for _, s := range r.shards {
		if s != nil {
			t0 = min(t0, s.Hail.Start.UnixNano())
		}
	}
	want := map[int]int64{}
	for _, s := range r.shards {
		if s == nil {
			continue
		}
		shift := int(math.Round(float64(s.Hail.Start.UnixNano()-t0) / 1e9))
		for _, sec := range s.Hail.Series {
			want[sec.Index+shift] += sec.Requests
		}
	}
	var total int64
	for _, sec := range r.merged.Hail.Series {
		if want[sec.Index] != sec.Requests {
			return false
		}
		total += sec.Requests
	}
	return total == r.merged.Hail.Counts.Requests
}

func (e *env) name(what string) string { return "e2e-" + what + "-" + e.stamp }

// jobGone reports whether the run's Job and ConfigMap are gone (hail kube
// deletes them once collected).
func (e *env) jobGone(ctx context.Context, run string) bool {
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
		_, jerr := e.cs.BatchV1().Jobs(namespace).Get(ctx, run, metav1.GetOptions{})
		_, cerr := e.cs.CoreV1().ConfigMaps(namespace).Get(ctx, run, metav1.GetOptions{})
		if apierrors.IsNotFound(jerr) && apierrors.IsNotFound(cerr) {
			return true
		}
	}
	return false
}

var load = []string{"-z", "10s", "-q", "2000", "-c", "16", "-w"}

// exact: n shards, every request the target served merged exactly, the
// starts within a millisecond, the seconds aligned, the report rendered,
// nothing left in the cluster.
func (e *env) exact(ctx context.Context, n int) {
	run := e.name(strconv.Itoa(n))
	before := e.served(ctx)
	r := e.kube(run, append([]string{"run", "--shards", strconv.Itoa(n), "--run", run, "--cpu", "100m", "--memory", "128Mi", "--"}, append(load, e.url)...)...)
	after := e.served(ctx)
	show(r)
	e.check(fmt.Sprintf("%s: exit %d (want 0)", run, r.code), r.code == 0)
	if r.merged == nil {
		e.check(run+": a merged result", false)
		return
	}
	c := r.merged.Hail.Counts
	e.check(fmt.Sprintf("%s: merged %d == sum of the %d shards %d == served %d, errors %d", run, c.Requests, len(r.shards), sumShards(r), after-before, c.Errors),
		len(r.shards) == n && c.Requests == sumShards(r) && c.Requests == after-before && c.Requests > 0 && c.Errors == 0)
	sp, wk := spread(r), woke(r)
	e.check(fmt.Sprintf("%s: the shards' schedules started %s apart (≤ 1ms); each began sending within %s of the agreed start", run, sp, wk),
		sp <= time.Millisecond && wk < time.Second)
	e.check(fmt.Sprintf("%s: per-second series aligned (%d seconds)", run, len(r.merged.Hail.Series)), aligned(r))
	e.check(fmt.Sprintf("%s: not marked incomplete, every shard complete", run), len(r.merged.Hail.Merged.Incomplete) == 0 && strings.Count(r.stderr, ": complete, ") == n)
	html, _ := os.ReadFile(filepath.Join(r.dir, "report.html"))
	e.check(fmt.Sprintf("%s: report rendered (%d bytes of HTML; the text report on stdout)", run, len(html)), bytes.Contains(html, []byte("Distributed run")) && strings.Contains(r.stdout, "Merged:"))
	e.check(run+": the Job and ConfigMap are deleted once collected", e.jobGone(ctx, run))
	e.summary = append(e.summary, fmt.Sprintf("%d shards: exit %d, merged %d = Σ shards %d = served %d, schedules %s apart, sending within %s of the start, %d seconds",
		n, r.code, c.Requests, sumShards(r), after-before, sp, wk, len(r.merged.Hail.Series)))
}

// podOf is the name of shard i's pod of run.
func (e *env) podOf(ctx context.Context, run string, i int) string {
	l, err := e.cs.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: "hail-run=" + run + ",batch.kubernetes.io/job-completion-index=" + strconv.Itoa(i)})
	if err != nil || len(l.Items) == 0 {
		return ""
	}
	return l.Items[0].Name
}

// started starts hail kube with args and returns once it says the run
// started (its stderr line), with what it printed so far.
type proc struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	output bytes.Buffer
}

func (p *proc) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.output.Write(b)
}

func (p *proc) text() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.output.String()
}

func (p *proc) waitFor(t *testing.T, s string, limit time.Duration) bool {
	for end := time.Now().Add(limit); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if strings.Contains(p.text(), s) {
			return true
		}
	}
	return false
}

func (p *proc) exit(limit time.Duration) int {
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(limit):
		_ = p.cmd.Process.Kill()
		<-done
		return -1
	}
}

func (e *env) start(run string, args ...string) *proc {
	all := append(e.kubeArgs(args[0]), args[1:]...)
	p := &proc{cmd: exec.Command(e.hail, all...)}
	p.cmd.Stdout, p.cmd.Stderr = p, p
	if err := p.cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	return p
}

// deleted: a shard's pod deleted mid-run (kubectl delete pod) stops it as
// a node drain would; its result, printed as it stopped, is merged; the
// merge names it interrupted; merged == served; exit 2.
func (e *env) deleted(ctx context.Context) {
	run := e.name("del")
	before := e.served(ctx)
	p := e.start(run, append([]string{"run", "--shards", "2", "--run", run, "--cpu", "100m", "--memory", "128Mi", "--", "-z", "20s", "-q", "2000", "-c", "16", "-w"}, e.url)...)
	if !p.waitFor(e.t, "the run starts at", 2*time.Minute) {
		e.check(run+": the run started", false)
		p.exit(time.Minute)
		return
	}
	time.Sleep(4 * time.Second)
	pod := e.podOf(ctx, run, 1)
	err := e.cs.CoreV1().Pods(namespace).Delete(ctx, pod, metav1.DeleteOptions{})
	e.check(fmt.Sprintf("%s: deleted shard 1's pod %s 4s into the run (%v)", run, pod, err), err == nil)
	code := p.exit(2 * time.Minute)
	after := e.served(ctx)
	r := kubeRun{code: code, stderr: p.text(), dir: filepath.Join(e.out, run)}
	e.read(&r)
	show(r)
	e.check(fmt.Sprintf("%s: exit %d (want 2: incomplete)", run, code), code == 2)
	if r.merged == nil {
		e.check(run+": a merged result", false)
		return
	}
	c := r.merged.Hail.Counts
	e.check(fmt.Sprintf("%s: merged %d == sum of the shards %d == served %d (the deleted shard's partial result included), errors %d", run, c.Requests, sumShards(r), after-before, c.Errors),
		c.Requests == sumShards(r) && c.Requests == after-before && c.Errors == 0)
	inc := strings.Join(r.merged.Hail.Merged.Incomplete, "; ")
	e.check(fmt.Sprintf("%s: the merge says %q", run, inc), regexp.MustCompile(`^shard 1/2 was interrupted after [0-9.]+s \(interrupted \(exit code 4\): its pod was deleted\)`).MatchString(inc))
	ps := r.merged.Hail.Merged.PerShard
	e.check(fmt.Sprintf("%s: per shard: %s; %s", run, report.OutcomeLine(ps[0], 2), report.OutcomeLine(ps[1], 2)), len(ps) == 2 && ps[0].Outcome == report.OutcomeComplete && ps[1].Outcome == report.OutcomeInterrupted && ps[1].Merged)
	e.summary = append(e.summary, fmt.Sprintf("shard deleted 4 s into 20 s: exit %d, merged %d = Σ shards %d = served %d; %s", code, c.Requests, sumShards(r), after-before, inc))
}

// badImage: a shard image that cannot be pulled fails the run within 30 s
// naming the cause; nothing is sent, nothing left.
func (e *env) badImage(ctx context.Context) {
	run := e.name("img")
	before := e.served(ctx)
	r := e.kube(run, "run", "--shards", "2", "--run", run, "--image", "hail:nope", "--", "-z", "10s", e.url)
	show(r)
	last := strings.TrimSpace(r.stderr)
	last = last[strings.LastIndexByte(last, '\n')+1:]
	e.check(fmt.Sprintf("%s: exit %d after %s (want 1 within 30s): %s", run, r.code, r.took.Round(100*time.Millisecond), last),
		r.code == 1 && r.took < 30*time.Second && regexp.MustCompile(`cannot start: (ErrImagePull|ImagePullBackOff): .*hail:nope.*\(kubectl -n hail-e2e describe pod `).MatchString(last))
	_, err := os.Stat(r.dir)
	e.check(run+": nothing sent, the Job and ConfigMap deleted, no results directory", e.served(ctx) == before && e.jobGone(ctx, run) && os.IsNotExist(err))
	e.summary = append(e.summary, fmt.Sprintf("bad image: exit %d after %s: %s", r.code, r.took.Round(100*time.Millisecond), last))
}

// openPTY opens a pseudo-terminal: its controlling side and the terminal.
func openPTY() (*os.File, *os.File, error) {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, err
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		return nil, nil, err
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		m.Close()
		return nil, nil, err
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		return nil, nil, err
	}
	return m, s, nil
}

// detach: hail kube run on a terminal; Ctrl-C asks stop or detach; "d"
// detaches (exit 0, the run goes on); hail kube collect then waits for its
// end and merges it: merged == served.
func (e *env) detach(ctx context.Context) {
	run := e.name("det")
	before := e.served(ctx)
	m, s, err := openPTY()
	if err != nil {
		e.t.Fatal(err)
	}
	defer m.Close()
	args := append([]string{"kube", "run", "-n", namespace, "--out", e.out, "--shards", "2", "--run", run, "--cpu", "100m", "--memory", "128Mi", "--", "-z", "15s", "-q", "1000", "-c", "8"}, e.url)
	p := &proc{cmd: exec.Command(e.hail, args...)}
	p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr = s, s, s
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := p.cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	s.Close()
	drained := make(chan struct{}) // the terminal read to its end (EIO once hail has exited)
	go func() {
		defer close(drained)
		buf := make([]byte, 4096)
		for {
			n, err := m.Read(buf)
			p.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()
	if !p.waitFor(e.t, "the run starts at", 2*time.Minute) {
		e.check(run+": the run started", false)
		p.exit(time.Minute)
		return
	}
	time.Sleep(3 * time.Second)
	_ = p.cmd.Process.Signal(os.Interrupt)
	asked := p.waitFor(e.t, "[s/d]", 10*time.Second)
	e.check(run+": Ctrl-C on a terminal asks: stop or detach [s/d]", asked)
	fmt.Fprintln(m, "d")
	code := p.exit(30 * time.Second)
	select { // what hail printed last is still in the terminal when it exits
	case <-drained:
	case <-time.After(5 * time.Second):
	}
	said := strings.Contains(p.text(), "detached: run "+run+" goes on; collect it with: hail kube collect "+run+" -n "+namespace)
	e.check(fmt.Sprintf("%s: detached, exit %d (want 0), saying how to collect", run, code), code == 0 && said)
	if code != 0 || !said {
		fmt.Printf("e2e: what hail kube printed on the terminal:\n%q\n", p.text())
	}
	_, err = e.cs.BatchV1().Jobs(namespace).Get(ctx, run, metav1.GetOptions{})
	e.check(run+": the run goes on (its Job is there)", err == nil)
	r := e.kube(run, "collect", run)
	after := e.served(ctx)
	show(r)
	e.check(fmt.Sprintf("%s: hail kube collect: exit %d (want 0)", run, r.code), r.code == 0)
	if r.merged == nil {
		e.check(run+": a merged result", false)
		return
	}
	c := r.merged.Hail.Counts
	e.check(fmt.Sprintf("%s: collected: merged %d == sum of the shards %d == served %d", run, c.Requests, sumShards(r), after-before), c.Requests == sumShards(r) && c.Requests == after-before && c.Requests > 0)
	e.summary = append(e.summary, fmt.Sprintf("Ctrl-C, detach, collect: detach exit %d, collect exit %d, merged %d = served %d", code, r.code, c.Requests, after-before))
}

// stop: a detached run (--detach) stopped with hail kube stop: each shard
// stops and writes what it did; collect merges it, each named interrupted.
func (e *env) stop(ctx context.Context) {
	run := e.name("stop")
	before := e.served(ctx)
	r := e.kube(run, "run", "--shards", "2", "--run", run, "--cpu", "100m", "--memory", "128Mi", "--detach", "--", "-z", "60s", "-q", "1000", "-c", "8", e.url)
	e.check(fmt.Sprintf("%s: --detach returns once started: exit %d", run, r.code), r.code == 0 && strings.Contains(r.stderr, "the run starts at"))
	time.Sleep(3 * time.Second)
	st := e.kube(run, "stop", run)
	show(st)
	e.check(fmt.Sprintf("%s: hail kube stop: exit %d", run, st.code), st.code == 0 && strings.Contains(st.stderr, "stopped; merge what it did with: hail kube collect"))
	r = e.kube(run, "collect", run)
	after := e.served(ctx)
	show(r)
	if r.merged == nil {
		e.check(run+": a merged result", false)
		return
	}
	c := r.merged.Hail.Counts
	e.check(fmt.Sprintf("%s: collected: exit %d (want 2), merged %d == served %d, %d shards interrupted", run, r.code, c.Requests, after-before, strings.Count(r.stderr, ": interrupted after")),
		r.code == 2 && c.Requests == after-before && c.Requests > 0 && strings.Count(r.stderr, ": interrupted after") == 2)
	e.summary = append(e.summary, fmt.Sprintf("--detach, hail kube stop, collect: exit %d, merged %d = served %d, both shards interrupted", r.code, c.Requests, after-before))
}

// scenario: a scenario whose unique feed is a data file too large for a
// ConfigMap (1.2 MB): shipped on the results volume, mounted at its path
// in the shards, its rows split among them: each used once, merged ==
// rows == served.
func (e *env) scenario(ctx context.Context) {
	run := e.name("scn")
	dir := filepath.Join(e.out, "scenario")
	os.MkdirAll(dir, 0o755)
	const rows = 12000
	var csv bytes.Buffer
	csv.WriteString("id,pad\n")
	pad := strings.Repeat("x", 90)
	for i := range rows {
		fmt.Fprintf(&csv, "%d,%s\n", i, pad)
	}
	if err := os.WriteFile(filepath.Join(dir, "users.csv"), csv.Bytes(), 0o644); err != nil {
		e.t.Fatal(err)
	}
	sc := fmt.Sprintf("name: signup\nbase: %s\nconnections: 8\nrequests: %d\nfeeds:\n  users: {file: users.csv, order: unique}\nsteps:\n  - {name: signup, method: POST, path: '/users/{{feed.users.id}}', body: 'x'}\n", strings.TrimSuffix(e.url, "/"), rows)
	if err := os.WriteFile(filepath.Join(dir, "signup.yaml"), []byte(sc), 0o644); err != nil {
		e.t.Fatal(err)
	}
	before := e.served(ctx)
	r := e.kube(run, "run", "--shards", "2", "--run", run, "--cpu", "100m", "--memory", "128Mi", "--results", "pvc:"+claim, "--", filepath.Join(dir, "signup.yaml"))
	after := e.served(ctx)
	show(r)
	e.check(fmt.Sprintf("%s: a scenario with a %d KB data file on claim %s: exit %d", run, csv.Len()/1000, claim, r.code), r.code == 0 && strings.Contains(r.stderr, "staging 1 file(s) on claim "+claim))
	if r.merged == nil {
		e.check(run+": a merged result", false)
		return
	}
	c := r.merged.Hail.Counts
	e.check(fmt.Sprintf("%s: each of the %d rows used once: merged %d == served %d, shards %d + %d", run, rows, c.Requests, after-before, r.shards[0].Hail.Counts.Requests, r.shards[1].Hail.Counts.Requests),
		c.Requests == rows && after-before == rows && r.shards[0].Hail.Counts.Requests == rows/2)
	e.check(run+": merged step by step", len(r.merged.Hail.Steps) == 1 && r.merged.Hail.Steps[0].Counts.Requests == rows)
	e.summary = append(e.summary, fmt.Sprintf("scenario, %d KB feed on the volume: exit %d, merged %d = rows %d = served %d", csv.Len()/1000, r.code, c.Requests, rows, after-before))
}

func mustQuantity(s string) resource.Quantity { return resource.MustParse(s) }

// grpcRun: a gRPC run shards as HTTP does: -n 2000 calls split 1000 and
// 1000 (the shards find the schema by the server's reflection, in the
// cluster), merged exactly, no errors.
func (e *env) grpcRun(ctx context.Context) {
	run := e.name("grpc")
	r := e.kube(run, "run", "--shards", "2", "--run", run, "--cpu", "100m", "--memory", "128Mi", "--",
		"grpc", "--insecure", "--call", "hail.v1.Target/Echo", "-d", `{"payload":"hi"}`, "-n", "2000", "-c", "2", e.grpc)
	show(r)
	if r.merged == nil || r.merged.Hail.GRPC == nil || len(r.shards) != 2 || r.shards[0] == nil || r.shards[1] == nil {
		e.check(fmt.Sprintf("%s: a gRPC run: exit %d, a merged result", run, r.code), false)
		return
	}
	g := r.merged.Hail.GRPC
	e.check(fmt.Sprintf("%s: a gRPC run: exit %d; merged %d calls == %d + %d, %d errors, status %v", run, r.code, g.Calls,
		r.shards[0].Hail.GRPC.Calls, r.shards[1].Hail.GRPC.Calls, r.merged.Hail.Counts.Errors, r.merged.StatusCodeDistribution),
		r.code == 0 && g.Calls == 2000 && r.shards[0].Hail.GRPC.Calls == 1000 && r.merged.Hail.Counts.Errors == 0 && r.merged.StatusCodeDistribution["OK"] == 2000)
	e.summary = append(e.summary, fmt.Sprintf("gRPC: exit %d, merged %d calls = %d + %d, status %v", r.code, g.Calls, r.shards[0].Hail.GRPC.Calls, r.shards[1].Hail.GRPC.Calls, r.merged.StatusCodeDistribution))
}
