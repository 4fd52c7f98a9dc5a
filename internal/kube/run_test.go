package kube

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hail-loadgen/hail/internal/report"
	"github.com/hail-loadgen/hail/result"
)

// testSpec is a run of n shards in the simulated cluster's namespace.
func testSpec(n int) *Spec {
	return &Spec{Name: "r1", Namespace: "load", Token: "barrier-token", Shards: n, Image: "hail:local", CPU: "100m", Memory: "256Mi",
		Args: []string{"-z", "2s", "http://10.88.0.9:8080/"}, ReadyTimeout: 5 * time.Second, KeepFor: time.Hour}
}

// outcome is one run in the simulated cluster.
type outcome struct {
	code           int
	err            error
	stdout, stderr string
	took           time.Duration
	merged         *result.Result
	dir            string
}

// runSim runs spec in the simulated cluster s with r (made by s when nil).
func runSim(t *testing.T, s *sim, spec *Spec, adjust func(r *Runner)) outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out := t.TempDir()
	r, so, se := s.runner(out)
	if adjust != nil {
		adjust(r)
	}
	s.run(ctx, spec)
	t0 := time.Now()
	code, err := r.Run(ctx, spec, nil)
	o := outcome{code: code, err: err, stdout: so.String(), stderr: se.String(), took: time.Since(t0), dir: filepath.Join(out, spec.Name)}
	if f, ferr := os.Open(filepath.Join(o.dir, "total.json")); ferr == nil {
		o.merged, _ = result.ReadJSON(f)
		f.Close()
	}
	return o
}

// gone checks that the run left nothing in the cluster.
func gone(t *testing.T, s *sim, spec *Spec) {
	t.Helper()
	if _, err := get[batchv1.Job](s.cs, Jobs, s.ns, spec.Name); !apierrors.IsNotFound(err) {
		t.Errorf("the Job is left: %v", err)
	}
	if _, err := get[corev1.ConfigMap](s.cs, ConfigMaps, s.ns, spec.Name); !apierrors.IsNotFound(err) {
		t.Errorf("the ConfigMap is left: %v", err)
	}
}

func ok(n int) func(int) script {
	return func(int) script { return script{requests: n, end: "ok"} }
}

// A complete run: every shard ready, one start for all, the results in
// the logs merged exactly, a line per shard, the objects deleted.
func TestRunComplete(t *testing.T) {
	t.Parallel()
	s := newSim(t, func(i int) script { return script{requests: 100 + i, end: "ok"} })
	spec := testSpec(3)
	o := runSim(t, s, spec, nil)
	if o.err != nil || o.code != 0 {
		t.Fatalf("code %d, %v\n%s", o.code, o.err, o.stderr)
	}
	if o.merged == nil || o.merged.Hail.Counts.Requests != 303 || len(o.merged.Hail.Merged.Incomplete) != 0 {
		t.Fatalf("merged %+v", o.merged)
	}
	for _, want := range []string{"every shard is ready: the run starts at", "shard 0/3: complete, 100 requests merged", "shard 2/3: complete, 102 requests merged", "merged result: "} {
		if !strings.Contains(o.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, o.stderr)
		}
	}
	if !strings.Contains(o.stdout, "Merged:") {
		t.Errorf("no text report on stdout:\n%s", o.stdout)
	}
	for _, f := range []string{"total.json", "report.html", "shard-0.json", "shard-2.log"} {
		if _, err := os.Stat(filepath.Join(o.dir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	gone(t, s, spec)
}

// A shard that cannot start fails the run within seconds with the cause
// the cluster gives — not at a timeout — the others (waiting at their
// barrier) are called off with nothing sent, and everything made is
// deleted, here and there.
func TestRunCannotStart(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		pending func(p *corev1.Pod)
		noPods  string
		want    []string
	}{
		{name: "bad image", pending: func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodPending
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: container, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
				Reason: "ImagePullBackOff", Message: `Back-off pulling image "hail:nope": ErrImagePull: failed to pull and unpack image: not found`}}}}
		}, want: []string{"shard 1 (pod r1-1-x1) cannot start: ImagePullBackOff: Back-off pulling image \"hail:nope\"", "kubectl -n load describe pod r1-1-x1"}},
		{name: "unschedulable", pending: func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodPending
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
				Message: "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."}}
		}, want: []string{"unschedulable: the scheduler says \"0/1 nodes are available: 1 Insufficient cpu."}},
		{name: "claim pending", pending: func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodPending
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
				Message: "0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: not eligible"}}
		}, want: []string{"its claim  is not bound", "unbound immediate PersistentVolumeClaims"}},
		{name: "config error", pending: func(p *corev1.Pod) {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: container, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
				Reason: "CreateContainerConfigError", Message: `configmap "r1" not found`}}}}
		}, want: []string{"CreateContainerConfigError: configmap \"r1\" not found"}},
		{name: "admission denied", noPods: `Error creating: pods "r1-0-abc" is forbidden: violates PodSecurity "restricted:latest": runAsNonRoot != true`,
			want: []string{"the Job cannot create the shards' pods: Error creating: pods \"r1-0-abc\" is forbidden: violates PodSecurity \"restricted:latest\"", "kubectl -n load describe job r1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newSim(t, func(i int) script {
				if i == 1 {
					return script{pending: tc.pending}
				}
				return script{requests: 10, end: "ok"}
			})
			s.noPods = tc.noPods
			spec := testSpec(2)
			spec.ReadyTimeout = 20 * time.Second
			o := runSim(t, s, spec, nil)
			if o.err == nil || o.code != 1 {
				t.Fatalf("code %d, err %v", o.code, o.err)
			}
			for _, want := range tc.want {
				if !strings.Contains(o.err.Error(), want) {
					t.Errorf("error %q lacks %q", o.err, want)
				}
			}
			if o.took > 5*time.Second {
				t.Errorf("failed after %s, want within seconds", o.took)
			}
			if _, err := os.Stat(o.dir); !os.IsNotExist(err) {
				t.Errorf("the run's directory is left: %v", err)
			}
			gone(t, s, spec)
		})
	}
}

// The claim is checked before anything is made: missing, or pending with a
// class that binds at once.
func TestRunClaimChecked(t *testing.T) {
	t.Parallel()
	pending := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "slow", Namespace: "load"}, Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}}
	for _, tc := range []struct{ claim, want string }{
		{"nope", "--results pvc:nope: no such claim in namespace load"},
		{"slow", "--results pvc:slow: the claim is Pending (not bound to a volume): kubectl -n load describe pvc slow"},
	} {
		s := newSim(t, ok(1), pending)
		spec := testSpec(2)
		spec.Claim = tc.claim
		o := runSim(t, s, spec, nil)
		if o.err == nil || !strings.Contains(o.err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.claim, o.err, tc.want)
		}
		gone(t, s, spec)
	}
}

// A shard that runs but never reaches its barrier fails the run at
// --ready-timeout, naming it; the ready one is called off: nothing sent.
func TestRunNeverReady(t *testing.T) {
	t.Parallel()
	s := newSim(t, func(i int) script { return script{neverReady: i == 0, requests: 10, end: "ok"} })
	spec := testSpec(2)
	spec.ReadyTimeout = 1500 * time.Millisecond // the ready shard gets there in it with the package's tests 8 at a time on a busy machine (300 ms did not once)
	o := runSim(t, s, spec, nil)
	if o.err == nil || !strings.Contains(o.err.Error(), "not every shard was ready after 1.5s (--ready-timeout): shard 0 (running, not at the barrier yet); nothing was sent") {
		t.Fatalf("%v", o.err)
	}
	waitFor(t, func() bool { return s.calledOff.Load() == 1 }, "the ready shard to be called off")
	gone(t, s, spec)
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); !cond(); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// A shard deleted or evicted mid-run is interrupted: its partial result
// (read from its log as it stopped, though the pod is gone) is merged,
// the merge says what happened to it, and the run is incomplete (exit 2).
func TestRunShardInterrupted(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ end, why string }{
		{"delete", "interrupted (exit code 4): its pod was deleted"},
		{"evict", "interrupted (exit code 4): evicted or preempted: EvictionByEvictionAPI: Eviction API: evicting"},
	} {
		t.Run(tc.end, func(t *testing.T) {
			t.Parallel()
			s := newSim(t, func(i int) script {
				if i == 1 {
					return script{requests: 60, end: tc.end, after: 50 * time.Millisecond}
				}
				return script{requests: 50, end: "ok", after: 200 * time.Millisecond}
			})
			spec := testSpec(2)
			o := runSim(t, s, spec, nil)
			if o.err != nil || o.code != 2 {
				t.Fatalf("code %d, %v\n%s", o.code, o.err, o.stderr)
			}
			if o.merged.Hail.Counts.Requests != 80 {
				t.Errorf("merged %d requests, want 50 + the deleted shard's 30", o.merged.Hail.Counts.Requests)
			}
			inc := o.merged.Hail.Merged.Incomplete
			if len(inc) != 1 || !strings.HasPrefix(inc[0], "shard 1/2 was interrupted after 2s ("+tc.why+")") {
				t.Errorf("incomplete %q, want the cause %q", inc, tc.why)
			}
			for _, want := range []string{"shard 1 ended: " + tc.why, "shard 1/2: interrupted after 2s, 30 requests merged (" + tc.why + ")", "INCOMPLETE"} {
				if !strings.Contains(o.stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, o.stderr)
				}
			}
			ps := o.merged.Hail.Merged.PerShard
			if len(ps) != 2 || ps[1].Outcome != report.OutcomeInterrupted || ps[0].Outcome != report.OutcomeComplete {
				t.Errorf("per shard %+v", ps)
			}
		})
	}
}

// A shard OOM-killed or crashed has no result: it fails with the
// container's real reason — OOMKilled, or the panic's first line, not the
// last line of the register dump — and the others are merged.
func TestRunShardFailed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ end, why string }{
		{"oom", "OOMKilled (exit code 137): it went over its memory limit of 256Mi"},
		{"crash", "Error (exit code 2): crashed: panic: runtime error: index out of range [5] with length 3"},
	} {
		t.Run(tc.end, func(t *testing.T) {
			t.Parallel()
			s := newSim(t, func(i int) script {
				if i == 0 {
					return script{end: tc.end, after: 20 * time.Millisecond}
				}
				return script{requests: 40, end: "ok", after: 100 * time.Millisecond}
			})
			spec := testSpec(2)
			o := runSim(t, s, spec, nil)
			if o.err != nil || o.code != 2 {
				t.Fatalf("code %d, %v\n%s", o.code, o.err, o.stderr)
			}
			want := tc.why
			if tc.end == "crash" {
				want = "crashed (exit code 2): panic: runtime error: index out of range [5] with length 3"
			}
			if inc := o.merged.Hail.Merged.Incomplete; len(inc) != 1 || inc[0] != "shard 0/2 failed: "+want {
				t.Errorf("incomplete %q, want %q", inc, want)
			}
			if strings.Contains(o.stderr, "gs 0x0") || !strings.Contains(o.stderr, "shard 0/2: failed, no result ("+want+")") {
				t.Errorf("stderr:\n%s", o.stderr)
			}
			if o.merged.Hail.Counts.Requests != 40 {
				t.Errorf("merged %d", o.merged.Hail.Counts.Requests)
			}
		})
	}
}

// Every shard failed: nothing to merge, each named, exit 1; with a
// volume, no helper pod is started to fetch nothing.
func TestRunAllFailed(t *testing.T) {
	t.Parallel()
	for _, claim := range []string{"", "results"} {
		pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "results", Namespace: "load"}, Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound}}
		s := newSim(t, func(i int) script { return script{end: "oom", after: 10 * time.Millisecond} }, pvc)
		s.results = t.TempDir()
		spec := testSpec(2)
		spec.Claim = claim
		o := runSim(t, s, spec, nil)
		if !errors.Is(o.err, errNothing) || o.code != 1 {
			t.Fatalf("%q: code %d, %v", claim, o.code, o.err)
		}
		if strings.Count(o.stderr, "no result: OOMKilled (exit code 137)") != 2 {
			t.Errorf("%q: stderr:\n%s", claim, o.stderr)
		}
		if s.pod("r1-fetch") != nil {
			t.Errorf("%q: a fetch pod was started with nothing to fetch", claim)
		}
	}
}

// Results on a volume: the shards write there, a helper pod reads them
// back through the pod proxy, and is deleted.
func TestRunVolume(t *testing.T) {
	t.Parallel()
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "results", Namespace: "load"}, Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound}}
	s := newSim(t, func(i int) script {
		if i == 1 {
			return script{requests: 80, end: "delete", after: 30 * time.Millisecond}
		}
		return script{requests: 70, end: "ok", after: 80 * time.Millisecond}
	}, pvc)
	s.results = t.TempDir()
	spec := testSpec(2)
	spec.Claim = "results"
	o := runSim(t, s, spec, nil)
	if o.err != nil || o.code != 2 || o.merged.Hail.Counts.Requests != 110 {
		t.Fatalf("code %d, %v, merged %+v\n%s", o.code, o.err, o.merged, o.stderr)
	}
	if s.pod("r1-fetch") == nil {
		t.Error("no fetch pod")
	}
	if _, err := get[corev1.Pod](s.cs, Pods, "load", "r1-fetch"); !apierrors.IsNotFound(err) {
		t.Errorf("the fetch pod is left: %v", err)
	}
}

// Ctrl-C: with a terminal it asks; "s" stops the shards (each writes what
// it did) and merges them; without a terminal it stops at once.
func TestRunCtrlCStops(t *testing.T) {
	t.Parallel()
	for _, terminal := range []bool{true, false} {
		s := newSim(t, func(i int) script { return script{requests: 100, end: "stopped"} })
		spec := testSpec(2)
		ints := make(chan struct{}, 1)
		var asked string
		o := runSim(t, s, spec, func(r *Runner) {
			r.Interrupts = ints
			if terminal {
				r.Ask = func(q string) (string, error) { asked = q; return "s\n", nil }
			}
			go func() {
				waitFor(t, func() bool { return s.at.Load() != 0 }, "the start")
				ints <- struct{}{}
			}()
		})
		if o.err != nil || o.code != 2 {
			t.Fatalf("terminal %v: code %d, %v\n%s", terminal, o.code, o.err, o.stderr)
		}
		if terminal != strings.Contains(asked, "stop run r1 (s: ") {
			t.Errorf("terminal %v: asked %q", terminal, asked)
		}
		if o.merged.Hail.Counts.Requests != 100 || !strings.Contains(o.stderr, "the run was stopped (hail kube)") {
			t.Errorf("terminal %v: merged %d\n%s", terminal, o.merged.Hail.Counts.Requests, o.stderr)
		}
		gone(t, s, spec)
	}
}

// Ctrl-C and "d" detaches: the run goes on, its objects stay; hail kube
// collect later waits for its end and merges it.
func TestRunDetachCollect(t *testing.T) {
	t.Parallel()
	s := newSim(t, func(i int) script { return script{requests: 30, end: "ok", after: 300 * time.Millisecond} })
	spec := testSpec(2)
	ints := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := t.TempDir()
	r, _, se := s.runner(out)
	r.Interrupts = ints
	r.Ask = func(string) (string, error) { return "d\n", nil }
	s.run(ctx, spec)
	go func() {
		waitFor(t, func() bool { return s.at.Load() != 0 }, "the start")
		ints <- struct{}{}
	}()
	code, err := r.Run(ctx, spec, nil)
	if err != nil || code != 0 || !strings.Contains(se.String(), "detached: run r1 goes on; collect it with: hail kube collect r1 -n load") {
		t.Fatalf("detach: %d %v", code, err)
	}
	if _, err := get[batchv1.Job](s.cs, Jobs, "load", "r1"); err != nil {
		t.Fatalf("the detached run's Job: %v", err)
	}
	r2, so, _ := s.runner(out)
	loaded, err := r2.LoadSpec(ctx, "load", "r1")
	if err != nil || loaded.Shards != 2 || loaded.Args[0] != "-z" {
		t.Fatalf("spec %+v %v", loaded, err)
	}
	code, err = r2.Collect(ctx, loaded)
	if err != nil || code != 0 || !strings.Contains(so.String(), "Merged:") {
		t.Fatalf("collect: %d %v", code, err)
	}
	b, _ := os.ReadFile(filepath.Join(out, "r1", "total.json"))
	m, _ := result.ReadJSON(strings.NewReader(string(b)))
	if m == nil || m.Hail.Counts.Requests != 60 {
		t.Errorf("collected %+v", m)
	}
	gone(t, s, spec)
}

// Shards that got no success (exit 3) make the run exit 3 when all did.
func TestRunNoSuccess(t *testing.T) {
	t.Parallel()
	s := newSim(t, func(i int) script { return script{requests: 20, end: "exit3"} })
	o := runSim(t, s, testSpec(2), nil)
	if o.err != nil || o.code != exitNoSuccess || !strings.Contains(o.stderr, "no request succeeded on any shard") {
		t.Fatalf("code %d, %v\n%s", o.code, o.err, o.stderr)
	}
}

// A taken name is refused before anything is made.
func TestRunNameTaken(t *testing.T) {
	t.Parallel()
	s := newSim(t, ok(1))
	spec := testSpec(2)
	if err := s.cs.Create(context.Background(), Jobs, "load", spec.Job()); err != nil {
		t.Fatal(err)
	}
	o := runSim(t, s, spec, nil)
	if o.err == nil || !strings.Contains(o.err.Error(), "a run named r1 exists in namespace load") {
		t.Fatalf("%v", o.err)
	}
}

// --detach returns once the run has started; hail kube stop tells every
// shard to stop (each writes what it did) and records the stop; collect
// merges them, each named as stopped by hail kube.
func TestRunDetachStopCollect(t *testing.T) {
	t.Parallel()
	s := newSim(t, func(i int) script { return script{requests: 40, end: "stopped"} })
	spec := testSpec(2)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := t.TempDir()
	r, _, _ := s.runner(out)
	r.Detach = true
	s.run(ctx, spec)
	if code, err := r.Run(ctx, spec, nil); err != nil || code != 0 {
		t.Fatalf("run --detach: %d %v", code, err)
	}
	r2, _, se := s.runner(out)
	loaded, err := r2.LoadSpec(ctx, "load", "r1")
	if err != nil {
		t.Fatal(err)
	}
	if err := r2.Stop(ctx, loaded); err != nil || !strings.Contains(se.String(), "run r1 stopped; merge what it did with: hail kube collect r1 -n load") {
		t.Fatalf("stop: %v\n%s", err, se.String())
	}
	r3, _, se3 := s.runner(out)
	loaded, _ = r3.LoadSpec(ctx, "load", "r1")
	code, err := r3.Collect(ctx, loaded)
	if err != nil || code != 2 || strings.Count(se3.String(), "interrupted (exit code 4): the run was stopped (hail kube)") != 2 {
		t.Fatalf("collect: %d %v\n%s", code, err, se3.String())
	}
	gone(t, s, spec)
}
