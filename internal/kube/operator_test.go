package kube

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	"github.com/hail-loadgen/hail/result"
)

// opTest is an operator on the simulated cluster.
type opTest struct {
	t       *testing.T
	s       *sim
	tracker k8stesting.ObjectTracker
	log     *syncWriter
	buf     *bytes.Buffer
	// watching gets a value as each watch of HailRuns starts: the fake's
	// watch sees only what is made after it (a real API server's resumes
	// from the list), so a test makes its HailRuns once one watches.
	watching chan struct{}
}

// newOpTest is a simulated cluster whose API knows HailRuns (fakeScheme).
func newOpTest(t *testing.T, scripts func(i int) script) *opTest {
	watching := make(chan struct{}, 8)
	cs, tracker := newFakeCluster(func(r schema.GroupVersionResource) {
		if r == HailRuns {
			select {
			case watching <- struct{}{}:
			default:
			}
		}
	})
	s := newSim(t, scripts)
	s.cs = cs
	var buf bytes.Buffer
	return &opTest{t: t, s: s, tracker: tracker, buf: &buf, log: &syncWriter{w: &buf}, watching: watching}
}

// operator returns an operator named id, quick to poll.
func (ot *opTest) operator(id string) *Operator {
	return &Operator{Client: ot.s.cs, Identity: id, LeaseNamespace: "hail-system", LeaseName: "hail-operator", LeaseDuration: 2 * time.Second,
		Namespaces: []string{"load"}, Image: "hail:local", Log: ot.log, Validate: validateTest,
		io: func(string) podIO { return ot.s }, tick: 5 * time.Millisecond, lead: 300 * time.Millisecond, leaseTick: 20 * time.Millisecond}
}

// validateTest stands for hail's parsing: a flag it does not know is refused.
func validateTest(args []string) (time.Duration, error) {
	for _, a := range args {
		if a == "--bogus" {
			return 0, errors.New("unknown flag: --bogus")
		}
	}
	return 2 * time.Second, nil
}

// start runs op until the test ends (or stop is called), and waits until
// it leads and watches HailRuns.
func (ot *opTest) start(op *Operator) (stop func()) {
	stop = ot.startWaiting(op)
	select {
	case <-ot.watching:
	case <-time.After(10 * time.Second):
		ot.t.Fatalf("operator %s never watched HailRuns:\n%s", op.Identity, ot.logText())
	}
	return stop
}

// startWaiting runs op until the test ends (or stop is called), leading
// or not.
func (ot *opTest) startWaiting(op *Operator) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := op.Run(ctx); err != nil {
			ot.t.Errorf("operator %s: %v", op.Identity, err)
		}
	}()
	stop = func() { cancel(); <-done }
	ot.t.Cleanup(stop)
	return stop
}

// create makes a HailRun named name and plays the cluster for its Job.
func (ot *opTest) create(name string, spec HailRunSpec) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	ot.t.Cleanup(cancel)
	hr := &HailRun{TypeMeta: metav1.TypeMeta{APIVersion: HailRunGroup.String(), Kind: "HailRun"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "load", UID: types.UID("uid-" + name), Generation: 1}, Spec: spec}
	if err := ot.tracker.Create(HailRuns, hr, "load"); err != nil {
		ot.t.Fatal(err)
	}
	ot.s.run(ctx, &Spec{Name: name, Namespace: "load", Shards: spec.Shards, Claim: spec.Results.Claim})
}

// logText is what the operators logged so far.
func (ot *opTest) logText() string {
	ot.log.mu.Lock()
	defer ot.log.mu.Unlock()
	return ot.buf.String()
}

func (ot *opTest) get(name string) *HailRun {
	var hr HailRun
	if err := (ot.s.cs).Get(context.Background(), HailRuns, "load", name, &hr); err != nil {
		return nil
	}
	return &hr
}

// waitPhase waits until the HailRun is in phase, and returns it.
func (ot *opTest) waitPhase(name, phase string) *HailRun {
	ot.t.Helper()
	var hr *HailRun
	for end := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		hr = ot.get(name)
		if hr != nil && hr.Status.Phase == phase {
			return hr
		}
		if time.Now().After(end) {
			ot.t.Fatalf("%s never %s: %+v\n%s", name, phase, hr, ot.logText())
		}
	}
}

func condition(hr *HailRun, typ string) metav1.Condition {
	for _, c := range hr.Status.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return metav1.Condition{}
}

func args() []string { return []string{"-z", "2s", "-q", "100", "http://10.88.0.9:8080/"} }

// A HailRun is validated, run as an Indexed Job it owns, merged, and its
// status says so: Succeeded, each shard complete with its requests, the
// merged summary and verdict, the full result in a ConfigMap it owns;
// the Job and the run's ConfigMap deleted (cleanup Delete); the
// operator's metrics count it.
func TestOperatorRunsHailRun(t *testing.T) {
	t.Parallel()
	ot := newOpTest(t, func(i int) script { return script{requests: 100 + i, end: "ok"} })
	var job *batchv1.Job
	var mu sync.Mutex
	ot.s.cs.PrependReactor("create", "jobs", func(a k8stesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		job = a.(k8stesting.CreateAction).GetObject().(*batchv1.Job).DeepCopy()
		mu.Unlock()
		return false, nil, nil
	})
	op := ot.operator("op-a")
	ot.start(op)
	ot.create("r1", HailRunSpec{Shards: 3, Args: args(), Thresholds: []string{"requests >= 300"},
		Runner: RunnerTemplate{NodeSelector: map[string]string{"pool": "load"}, Env: []corev1.EnvVar{{Name: "X", Value: "1"}}}})
	hr := ot.waitPhase("r1", PhaseSucceeded)
	st := hr.Status
	if st.Summary == nil || st.Summary.Requests != 303 || st.Summary.Errors != 0 || st.Verdict == nil || st.Verdict.Bottleneck != result.BottleneckNone {
		t.Fatalf("summary %+v verdict %+v", st.Summary, st.Verdict)
	}
	for i, sh := range st.Shards {
		if sh.State != ShardComplete || sh.Requests != int64(100+i) {
			t.Errorf("shard %d: %+v", i, sh)
		}
	}
	if len(st.Thresholds) != 1 || !st.Thresholds[0].Pass {
		t.Errorf("thresholds %+v", st.Thresholds)
	}
	for _, c := range []string{"Validated", "Started", "Merged", "ThresholdsPassed"} {
		if condition(hr, c).Status != metav1.ConditionTrue {
			t.Errorf("condition %s: %+v", c, condition(hr, c))
		}
	}
	if st.StartTime == nil || st.CompletionTime == nil || st.Job != "r1" {
		t.Errorf("times %v %v, job %q", st.StartTime, st.CompletionTime, st.Job)
	}
	// The full result, gzipped in a ConfigMap the HailRun owns.
	var cm corev1.ConfigMap
	if st.Result == nil || st.Result.ConfigMap != "r1-result" {
		t.Fatalf("result %+v", st.Result)
	}
	if err := (ot.s.cs).Get(context.Background(), ConfigMaps, "load", "r1-result", &cm); err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(cm.BinaryData["total.json.gz"]))
	if err != nil {
		t.Fatal(err)
	}
	full, err := result.ReadJSON(zr)
	if err != nil || full.Hail.Counts.Requests != 303 || cm.OwnerReferences[0].UID != "uid-r1" {
		t.Fatalf("stored result: %v, %+v", err, cm.OwnerReferences)
	}
	// The Job: owned by the HailRun, the runner template applied.
	mu.Lock()
	j := job
	mu.Unlock()
	if j == nil || len(j.OwnerReferences) != 1 || j.OwnerReferences[0].Kind != "HailRun" || j.OwnerReferences[0].UID != "uid-r1" || !ptr.Deref(j.OwnerReferences[0].Controller, false) {
		t.Fatalf("the Job's owner: %+v", j)
	}
	ps := j.Spec.Template.Spec
	if ps.NodeSelector["pool"] != "load" || ps.Containers[0].Env[len(ps.Containers[0].Env)-1].Name != "X" {
		t.Errorf("runner template not applied: %+v", ps)
	}
	gone(t, ot.s, &Spec{Name: "r1", Namespace: "load"})
	// The metrics (the phases as the operator's watch has them: a moment
	// after the status is written).
	var text string
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		rec := httptest.NewRecorder()
		op.MetricsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		text = rec.Body.String()
		if strings.Contains(text, `hail_operator_hailruns{phase="Succeeded"} 1`) || time.Now().After(end) {
			break
		}
	}
	for _, want := range []string{`hail_operator_runs_ended_total{phase="Succeeded"} 1`, "hail_operator_leader 1", `hail_operator_hailruns{phase="Succeeded"} 1`} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %q:\n%s", want, text)
		}
	}
}

// A shard whose image cannot be pulled fails the run within seconds, the
// cluster's words in the status; nothing is left.
func TestOperatorBadImage(t *testing.T) {
	t.Parallel()
	ot := newOpTest(t, func(i int) script {
		if i == 1 {
			return script{pending: func(p *corev1.Pod) {
				p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: container, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
					Reason: "ErrImagePull", Message: `failed to pull and unpack image "docker.io/library/hail:nope": not found`}}}}
			}}
		}
		return script{requests: 10, end: "ok"}
	})
	ot.start(ot.operator("op-a"))
	t0 := time.Now()
	ot.create("bad", HailRunSpec{Shards: 2, Args: args(), Image: "hail:nope"})
	hr := ot.waitPhase("bad", PhaseFailed)
	if !strings.Contains(hr.Status.Message, "shard 1 (pod bad-1-x1) cannot start: ErrImagePull") || time.Since(t0) > 10*time.Second {
		t.Fatalf("after %s: %q", time.Since(t0), hr.Status.Message)
	}
	if c := condition(hr, "Merged"); c.Status != metav1.ConditionFalse || c.Reason != "NotStarted" {
		t.Errorf("condition %+v", c)
	}
	gone(t, ot.s, &Spec{Name: "bad", Namespace: "load"})
}

// Arguments hail refuses fail the run at Validating: nothing is made.
func TestOperatorInvalid(t *testing.T) {
	t.Parallel()
	ot := newOpTest(t, ok(1))
	ot.start(ot.operator("op-a"))
	for _, tc := range []struct {
		name string
		spec HailRunSpec
		want string
	}{
		{"flag", HailRunSpec{Shards: 2, Args: []string{"--bogus", "http://x/"}}, "spec.args: unknown flag: --bogus"},
		{"threshold", HailRunSpec{Shards: 2, Args: args(), Thresholds: []string{"p99 12ms"}}, "spec.thresholds: threshold \"p99 12ms\""},
		{"scenario", HailRunSpec{Shards: 2, Scenario: &ScenarioSource{ConfigMap: "nope", File: "s.yaml"}}, "spec.scenario.configMap nope: no such ConfigMap"},
		{"same", HailRunSpec{Shards: 2, Scenario: &ScenarioSource{ConfigMap: "inv-same", File: "s.yaml"}}, "the run's own ConfigMap takes the HailRun's name"},
		{"volume", HailRunSpec{Shards: 2, Args: args(), Runner: RunnerTemplate{Volumes: []corev1.Volume{{Name: "results"}}}}, "\"results\" is the operator's own volume name"},
		{"cpu", HailRunSpec{Shards: 2, Args: args(), Runner: RunnerTemplate{Resources: corev1.ResourceRequirements{}}, Cleanup: "Sometimes"}, "spec.cleanup \"Sometimes\""},
	} {
		ot.create("inv-"+tc.name, tc.spec)
		hr := ot.waitPhase("inv-"+tc.name, PhaseFailed)
		if !strings.Contains(hr.Status.Message, tc.want) || condition(hr, "Validated").Status != metav1.ConditionFalse {
			t.Errorf("%s: %q %+v", tc.name, hr.Status.Message, condition(hr, "Validated"))
		}
		if _, err := get[batchv1.Job](ot.s.cs, Jobs, "load", "inv-"+tc.name); err == nil {
			t.Errorf("%s: a Job was made", tc.name)
		}
	}
}

// Deleting a running HailRun stops its run: the Job and the run's
// ConfigMap are deleted (Kubernetes' garbage collector would too: the
// HailRun owns the Job), no status is written after.
func TestOperatorDeletionStopsJob(t *testing.T) {
	t.Parallel()
	ot := newOpTest(t, func(int) script { return script{requests: 10, end: "stopped"} })
	ot.start(ot.operator("op-a"))
	ot.create("del", HailRunSpec{Shards: 2, Args: args()})
	ot.waitPhase("del", PhaseRunning)
	if err := ot.tracker.Delete(HailRuns, "load", "del"); err != nil {
		t.Fatal(err)
	}
	// The operator deletes the Job, then the ConfigMap: wait for the last.
	waitFor(t, func() bool {
		_, jerr := get[batchv1.Job](ot.s.cs, Jobs, "load", "del")
		_, cerr := get[corev1.ConfigMap](ot.s.cs, ConfigMaps, "load", "del")
		return jerr != nil && cerr != nil
	}, "the Job and the ConfigMap deleted")
	gone(t, ot.s, &Spec{Name: "del", Namespace: "load"})
}

// Cleanup Keep keeps the Job (no TTL: until the HailRun is deleted) and
// the run's ConfigMap once merged.
func TestOperatorCleanupKeep(t *testing.T) {
	t.Parallel()
	ot := newOpTest(t, ok(20))
	ot.start(ot.operator("op-a"))
	ot.create("keep", HailRunSpec{Shards: 2, Args: args(), Cleanup: CleanupKeep})
	hr := ot.waitPhase("keep", PhaseSucceeded)
	if hr.Status.Summary.Requests != 40 {
		t.Errorf("summary %+v", hr.Status.Summary)
	}
	j, err := get[batchv1.Job](ot.s.cs, Jobs, "load", "keep")
	if err != nil || j.Spec.TTLSecondsAfterFinished != nil {
		t.Fatalf("the Job: %v, TTL %v", err, j)
	}
	if _, err := get[corev1.ConfigMap](ot.s.cs, ConfigMaps, "load", "keep"); err != nil {
		t.Errorf("the run's ConfigMap: %v", err)
	}
}

// One replica leads; when it stops mid-run, it lets the Lease go, the run
// goes on in the cluster, and the waiting replica takes the Lease, adopts
// the run and merges it.
func TestOperatorLeaderHandoff(t *testing.T) {
	t.Parallel()
	ot := newOpTest(t, func(i int) script { return script{requests: 50, end: "ok", after: 700 * time.Millisecond} })
	a, b := ot.operator("op-a"), ot.operator("op-b")
	stopA := ot.start(a)
	waitFor(t, func() bool { return holder(ot) == "op-a" }, "op-a to lead")
	ot.startWaiting(b)
	ot.create("ho", HailRunSpec{Shards: 2, Args: args()})
	ot.waitPhase("ho", PhaseRunning)
	if holder(ot) != "op-a" {
		t.Fatalf("the Lease is %q's while op-a runs", holder(ot))
	}
	stopA()
	hr := ot.waitPhase("ho", PhaseSucceeded)
	if holder(ot) != "op-b" || hr.Status.Summary.Requests != 100 {
		t.Fatalf("holder %q, summary %+v\n%s", holder(ot), hr.Status.Summary, ot.logText())
	}
	for _, want := range []string{"op-b leads", "hailrun load/ho is under way and no replica runs it: collecting it"} {
		if !strings.Contains(ot.logText(), strings.TrimPrefix(want, "hailrun ")) {
			t.Errorf("log lacks %q:\n%s", want, ot.logText())
		}
	}
}

func holder(ot *opTest) string {
	var l coordinationv1.Lease
	if err := (ot.s.cs).Get(context.Background(), Leases, "hail-system", "hail-operator", &l); err != nil {
		return ""
	}
	return ptr.Deref(l.Spec.HolderIdentity, "")
}

// The stop annotation stops a running HailRun as hail kube stop does: the
// shards stop and write what they did, which is merged; the run is
// incomplete, so Failed, with the merged summary and each shard
// Interrupted.
func TestOperatorStopAnnotation(t *testing.T) {
	t.Parallel()
	ot := newOpTest(t, func(int) script { return script{requests: 40, end: "stopped"} })
	ot.start(ot.operator("op-a"))
	ot.create("st", HailRunSpec{Shards: 2, Args: args()})
	ot.waitPhase("st", PhaseRunning)
	hr := ot.get("st")
	hr.Annotations = map[string]string{StopAnnotation: "enough"}
	if err := ot.tracker.Update(HailRuns, hr, "load"); err != nil {
		t.Fatal(err)
	}
	hr = ot.waitPhase("st", PhaseFailed)
	st := hr.Status
	if st.Summary == nil || st.Summary.Requests != 40 || len(st.Incomplete) != 2 || !strings.Contains(st.Message, "the run is incomplete: shard 0/2 was interrupted") {
		t.Fatalf("status %+v %+v", st, st.Summary)
	}
	for _, sh := range st.Shards {
		if sh.State != ShardInterrupted || sh.Requests != 20 || !strings.Contains(sh.Reason, "the run was stopped") {
			t.Errorf("shard %+v", sh)
		}
	}
	if c := condition(hr, "Merged"); c.Status != metav1.ConditionTrue || c.Reason != "Incomplete" {
		t.Errorf("condition %+v", c)
	}
}

// A threshold that fails on the merged result fails the run; the status
// says which, with the measured value.
func TestOperatorThresholdFails(t *testing.T) {
	t.Parallel()
	ot := newOpTest(t, ok(30))
	ot.start(ot.operator("op-a"))
	ot.create("th", HailRunSpec{Shards: 2, Args: args(), Thresholds: []string{"requests >= 100", "error_rate < 1%"}})
	hr := ot.waitPhase("th", PhaseFailed)
	th := hr.Status.Thresholds
	if len(th) != 2 || th[0].Pass || th[0].Measured != "60" || !th[1].Pass || hr.Status.Message != "1 of 2 thresholds failed on the merged result" ||
		condition(hr, "ThresholdsPassed").Status != metav1.ConditionFalse || hr.Status.Summary.Requests != 60 {
		t.Fatalf("status %+v", hr.Status)
	}
}

// Results on a claim: the shards write theirs there, and the merged
// result is written beside them, through the volume helper.
func TestOperatorResultsOnClaim(t *testing.T) {
	t.Parallel()
	ot := newOpTest(t, ok(25))
	ot.s.results = t.TempDir()
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "results", Namespace: "load"}, Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound}}
	if err := ot.tracker.Add(pvc); err != nil {
		t.Fatal(err)
	}
	ot.start(ot.operator("op-a"))
	ot.create("vol", HailRunSpec{Shards: 2, Args: args(), Results: ResultsSink{Claim: "results"}})
	hr := ot.waitPhase("vol", PhaseSucceeded)
	if r := hr.Status.Result; r == nil || r.Claim != "results" || r.Path != "/results/vol.total.json" || r.ConfigMap != "vol-result" {
		t.Fatalf("result %+v (%s)", r, hr.Status.Message)
	}
	f, err := os.Open(filepath.Join(ot.s.results, "vol.total.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if m, err := result.ReadJSON(f); err != nil || m.Hail.Counts.Requests != 50 {
		t.Fatalf("the merged result on the volume: %v", err)
	}
}

// A scenario from a ConfigMap: hail's parsing reads it (and its files)
// from a copy, the shards run it from the ConfigMap mounted at
// /hail/scenario, with the HailRun's args after it.
func TestOperatorScenarioConfigMap(t *testing.T) {
	t.Parallel()
	ot := newOpTest(t, ok(10))
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "signup", Namespace: "load"},
		Data: map[string]string{"s.yaml": "steps: []\n", "users.csv": "a\nb\n"}}
	if err := ot.tracker.Add(cm); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []string
	var files []string
	op := ot.operator("op-a")
	op.Validate = func(args []string) (time.Duration, error) {
		mu.Lock()
		defer mu.Unlock()
		seen = args
		for _, n := range []string{"s.yaml", "users.csv"} {
			if b, err := os.ReadFile(filepath.Join(filepath.Dir(args[1]), n)); err == nil {
				files = append(files, string(b))
			}
		}
		return 0, nil
	}
	var job *batchv1.Job
	ot.s.cs.PrependReactor("create", "jobs", func(a k8stesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		job = a.(k8stesting.CreateAction).GetObject().(*batchv1.Job).DeepCopy()
		mu.Unlock()
		return false, nil, nil
	})
	ot.start(op)
	ot.create("scn", HailRunSpec{Shards: 2, Scenario: &ScenarioSource{ConfigMap: "signup", File: "s.yaml"}, Args: []string{"-z", "30s"}})
	ot.waitPhase("scn", PhaseSucceeded)
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 4 || seen[0] != "run" || filepath.Base(seen[1]) != "s.yaml" || seen[2] != "-z" || len(files) != 2 || files[1] != "a\nb\n" {
		t.Fatalf("validated %q, files %q", seen, files)
	}
	c := job.Spec.Template.Spec.Containers[0]
	if !slices.Equal(c.Args[:4], []string{"run", "/hail/scenario/s.yaml", "-z", "30s"}) {
		t.Errorf("args %q", c.Args)
	}
	mounted := false
	for _, m := range c.VolumeMounts {
		mounted = mounted || (m.Name == "scenario" && m.MountPath == ScenarioDir && m.ReadOnly)
	}
	vol := job.Spec.Template.Spec.Volumes[len(job.Spec.Template.Spec.Volumes)-1]
	if !mounted || vol.ConfigMap == nil || vol.ConfigMap.Name != "signup" {
		t.Errorf("mounts %+v, volume %+v", c.VolumeMounts, vol)
	}
	if bad := restrictedProblems(t, &job.Spec.Template.ObjectMeta, &job.Spec.Template.Spec); len(bad) > 0 {
		t.Errorf("the shards with the scenario volume: %q", bad)
	}
}

// hail kube run on a cluster with the operator: the run goes as a
// HailRun (its files in a ConfigMap it owns, mounted at their paths), the
// operator runs it, and hail kube writes the merged result and prints the
// report, exit 0; the HailRun stays, the run's record.
func TestSubmitHailRun(t *testing.T) {
	t.Parallel()
	ot := newOpTest(t, func(i int) script { return script{requests: 30 + i, end: "ok"} })
	ot.start(ot.operator("op-a"))
	spec := testSpec(2)
	spec.Name = "sub"
	spec.Files = []File{{Path: "/home/me/body.json", Key: "f0-body.json", Size: 2}}
	spec.Args = []string{"-z", "2s", "-D", "/home/me/body.json", "http://10.88.0.9:8080/"}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ot.s.run(ctx, spec)
	out := t.TempDir()
	r, so, se := ot.s.runner(out)
	r.Client = ot.s.cs
	if !ServesHailRuns(ctx, r.Client, "load") {
		t.Fatal("the cluster does not serve HailRuns")
	}
	code, err := r.Submit(ctx, spec, map[string][]byte{"f0-body.json": []byte("{}")})
	if err != nil || code != 0 {
		t.Fatalf("code %d, %v\n%s\n%s", code, err, se.String(), ot.logText())
	}
	f, err := os.Open(filepath.Join(out, "sub", "total.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if m, err := result.ReadJSON(f); err != nil || m.Hail.Counts.Requests != 61 {
		t.Fatalf("total.json: %v", err)
	}
	for _, want := range []string{"run sub: HailRun load/sub of 2 shards", "Succeeded: merged 61 requests of 2 shards", "shard 1/2: complete, 31 requests merged", "the HailRun stays"} {
		if !strings.Contains(se.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, se.String())
		}
	}
	if !strings.Contains(so.String(), "Merged:") {
		t.Errorf("no report on stdout:\n%s", so.String())
	}
	var cm corev1.ConfigMap
	if err := r.Client.Get(ctx, ConfigMaps, "load", "sub-files", &cm); err != nil || string(cm.BinaryData["f0-body.json"]) != "{}" || cm.OwnerReferences[0].Kind != "HailRun" {
		t.Fatalf("the files' ConfigMap: %v %+v", err, cm.OwnerReferences)
	}
	hr := ot.get("sub")
	m := hr.Spec.Runner.VolumeMounts
	if len(m) != 1 || m[0].MountPath != "/home/me/body.json" || m[0].SubPath != "f0-body.json" || hr.Spec.Runner.Volumes[0].ConfigMap.Name != "sub-files" {
		t.Errorf("mounts %+v", hr.Spec.Runner)
	}
}

// Ctrl-C while a submitted HailRun runs asks the operator to stop it: what
// the shards did is merged, the run incomplete (exit 2).
func TestSubmitCtrlCStops(t *testing.T) {
	t.Parallel()
	ot := newOpTest(t, func(int) script { return script{requests: 10, end: "stopped"} })
	ot.start(ot.operator("op-a"))
	spec := testSpec(2)
	spec.Name = "subc"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ot.s.run(ctx, spec)
	r, _, se := ot.s.runner(t.TempDir())
	r.Client = ot.s.cs
	ints := make(chan struct{}, 1)
	r.Interrupts = ints
	go func() {
		ot.waitPhase("subc", PhaseRunning)
		ints <- struct{}{}
	}()
	code, err := r.Submit(ctx, spec, nil)
	if err != nil || code != 2 || !strings.Contains(se.String(), "the run is incomplete: shard 0/2 was interrupted") {
		t.Fatalf("code %d, %v\n%s", code, err, se.String())
	}
}

// Without an operator to take it up, the HailRun is deleted again and
// Submit says so (hail kube run then runs it itself).
func TestSubmitNoOperator(t *testing.T) {
	t.Parallel()
	ot := newOpTest(t, ok(1))
	r, _, _ := ot.s.runner(t.TempDir())
	r.Client = ot.s.cs
	r.takeUp = 200 * time.Millisecond
	spec := testSpec(2)
	_, err := r.Submit(context.Background(), spec, nil)
	if !errors.Is(err, ErrNoOperator) || ot.get(spec.Name) != nil {
		t.Fatalf("%v; the HailRun: %v", err, ot.get(spec.Name))
	}
}

// A leader that dies without letting the Lease go holds it for its
// duration; then another replica takes it (one transition), and the old
// one, back, cannot take it while the new one renews.
func TestLeaseExpires(t *testing.T) {
	t.Parallel()
	cs, _ := newFakeCluster(nil)
	now := time.Unix(1_800_000_000, 0)
	clock := func() time.Time { return now }
	a := &elector{cs: cs, namespace: "hail-system", name: "hail-operator", id: "op-a", duration: 15 * time.Second, now: clock}
	b := &elector{cs: cs, namespace: "hail-system", name: "hail-operator", id: "op-b", duration: 15 * time.Second, now: clock}
	ctx := context.Background()
	if ok, err := a.try(ctx); !ok {
		t.Fatalf("op-a: %v", err)
	}
	now = now.Add(10 * time.Second)
	if ok, err := b.try(ctx); ok || !strings.Contains(err.Error(), "held by op-a") {
		t.Fatalf("op-b took a Lease op-a renewed 10s ago: %v", err)
	}
	now = now.Add(6 * time.Second)
	if ok, err := b.try(ctx); !ok {
		t.Fatalf("op-b could not take a Lease op-a left 16s ago: %v", err)
	}
	if ok, _ := a.try(ctx); ok {
		t.Fatal("op-a took back the Lease op-b holds")
	}
	var l coordinationv1.Lease
	if err := cs.Get(ctx, Leases, "hail-system", "hail-operator", &l); err != nil || *l.Spec.HolderIdentity != "op-b" || *l.Spec.LeaseTransitions != 1 {
		t.Fatalf("lease %+v: %v", l.Spec, err)
	}
}
