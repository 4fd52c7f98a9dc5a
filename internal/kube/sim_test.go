package kube

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/hail-loadgen/hail/internal/barrier"
	"github.com/hail-loadgen/hail/internal/report"
	"github.com/hail-loadgen/hail/internal/stats"
	"github.com/hail-loadgen/hail/result"
)

// A simulated cluster: client-go's fake clientset holds the objects; the
// test plays the Job controller and the kubelet (each shard's pod lives as
// its script says), and answers the pods' logs and HTTP endpoints (podIO)
// with the shard's real start barrier (barrier.Gate).

// script is what one shard does in the simulated cluster.
type script struct {
	pending    func(p *corev1.Pod) // a state it stays in, never running (a bad image, unschedulable)
	neverReady bool                // runs, never reaches its barrier
	requests   int                 // its result's requests (the whole share)
	end        string              // "ok", "delete", "evict", "oom", "crash", "stopped" (waits to be told), "exit3"
	after      time.Duration       // how long after the start it ends
}

type simPod struct {
	name  string
	index int
	gate  *barrier.Gate
	sent  atomic.Int64
	mu    sync.Mutex
	log   bytes.Buffer
	ended chan struct{}
	stop  chan struct{} // closed when the gate is told to stop after the start
	files http.Handler  // a volume helper's
}

type sim struct {
	t       *testing.T
	cs      fakeCluster
	ns      string
	scripts func(i int) script
	results string // with a volume: the directory the shards write to

	mu        sync.Mutex
	pods      map[string]*simPod
	noPods    string // the Job cannot create pods: this FailedCreate message
	calledOff atomic.Int32
	at        atomic.Int64 // the start each shard was given (Unix ns)
}

func newSim(t *testing.T, scripts func(i int) script, objs ...runtime.Object) *sim {
	cs, _ := newFakeCluster(nil, objs...)
	return &sim{t: t, cs: cs, ns: "load", scripts: scripts, pods: map[string]*simPod{}}
}

// runner returns a Runner on the simulated cluster, quick to poll, with a
// start's lead of 300 ms (a shard refuses a start less than 100 ms ahead:
// with the package's tests 8 at a time on a busy machine, a lead of 150 ms
// once reached a shard 42 ms ahead).
func (s *sim) runner(out string) (*Runner, *bytes.Buffer, *bytes.Buffer) {
	var so, se bytes.Buffer
	r := &Runner{Client: s.cs, Out: out, Stdout: &so, Stderr: &syncWriter{w: &se}, io: s, tick: 5 * time.Millisecond, lead: 300 * time.Millisecond}
	return r, &so, &se
}

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

// run plays the cluster until ctx ends: it makes the pods of the run's Job
// and lives each by its script, and makes the helper pods ready.
func (s *sim) run(ctx context.Context, spec *Spec) {
	go func() {
		var job *batchv1.Job
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(2 * time.Millisecond):
			}
			j, err := get[batchv1.Job](s.cs, Jobs, s.ns, spec.Name)
			if err == nil {
				job = j
				break
			}
		}
		if s.noPods != "" {
			ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: spec.Name + ".1", Namespace: s.ns}, Type: corev1.EventTypeWarning, Reason: "FailedCreate",
				Message: s.noPods, InvolvedObject: corev1.ObjectReference{Kind: "Job", Name: spec.Name, Namespace: s.ns}, LastTimestamp: metav1.Now()}
			if err := s.cs.Create(ctx, Events, s.ns, ev); err != nil {
				s.t.Error(err)
			}
			return
		}
		for i := range spec.Shards {
			go s.shard(ctx, spec, job, i)
		}
	}()
	go s.helpers(ctx, spec)
}

// shard creates shard i's pod and lives it.
func (s *sim) shard(ctx context.Context, spec *Spec, job *batchv1.Job, i int) {
	sc := s.scripts(i)
	name := fmt.Sprintf("%s-%d-x%d", spec.Name, i, i)
	sp := &simPod{name: name, index: i, ended: make(chan struct{}), stop: make(chan struct{})}
	var once sync.Once
	sp.gate = barrier.New(fmt.Sprintf("%d/%d", i, spec.Shards), func() { once.Do(func() { close(sp.stop) }) })
	for _, e := range job.Spec.Template.Spec.Containers[0].Env {
		if e.Name == barrier.TokenEnv {
			sp.gate.RequireToken(e.Value) // as hail does with the Job's token
		}
	}
	s.mu.Lock()
	s.pods[name] = sp
	s.mu.Unlock()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.ns, Labels: job.Spec.Template.Labels,
		Annotations: map[string]string{indexAnnotation: fmt.Sprint(i)}, CreationTimestamp: metav1.Now()}, Spec: job.Spec.Template.Spec}
	if err := s.cs.Create(ctx, Pods, s.ns, p); err != nil {
		s.t.Error(err)
		return
	}
	update := func(f func(p *corev1.Pod)) {
		cur, err := get[corev1.Pod](s.cs, Pods, s.ns, name)
		if err != nil {
			return
		}
		f(cur)
		_ = s.cs.UpdateStatus(ctx, Pods, s.ns, cur)
	}
	if sc.pending != nil {
		update(sc.pending)
		return
	}
	update(func(p *corev1.Pod) {
		p.Spec.NodeName = "node1"
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: container, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
	})
	if sc.neverReady {
		return
	}
	at, err := sp.gate.Wait(ctx, nil)
	if err != nil {
		s.calledOff.Add(1)
		sp.write("hail: " + err.Error() + "\n")
		s.terminate(ctx, name, 1, "Error", "")
		close(sp.ended)
		return
	}
	s.at.Store(at.UnixNano())
	time.Sleep(time.Until(at))
	sent := sc.requests
	switch sc.end {
	case "ok", "exit3", "":
		sp.sent.Store(int64(sent))
		time.Sleep(sc.after)
		res := s.result(spec, i, sent, false, at, sc.end == "exit3")
		code := int32(0)
		if sc.end == "exit3" {
			code = 3
		}
		s.finish(ctx, spec, sp, res, code, "")
	case "delete", "evict", "stopped":
		sp.sent.Store(int64(sent / 2))
		if sc.end == "stopped" {
			select {
			case <-sp.stop:
			case <-ctx.Done():
				return
			}
		} else {
			time.Sleep(sc.after)
			update(func(p *corev1.Pod) {
				now := metav1.Now()
				p.DeletionTimestamp = &now
				if sc.end == "evict" {
					p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
						Reason: "EvictionByEvictionAPI", Message: "Eviction API: evicting"})
				}
			})
		}
		res := s.result(spec, i, sent/2, true, at, false)
		s.finish(ctx, spec, sp, res, 4, "")
		if sc.end != "stopped" { // the job controller lets go: the pod object goes
			_ = s.cs.Delete(ctx, Pods, s.ns, name, metav1.DeleteOptions{})
		}
	case "oom":
		time.Sleep(sc.after)
		s.terminate(ctx, name, 137, "OOMKilled", "")
		close(sp.ended)
	case "crash":
		time.Sleep(sc.after)
		dump := "panic: runtime error: index out of range [5] with length 3\n\ngoroutine 7 [running]:\nmain.main()\n\t/src/main.go:12 +0x1d\nrax    0x0\nrip    0x4\ngs     0x0\n"
		sp.write(dump)
		s.terminate(ctx, name, 2, "Error", "rax    0x0\nrip    0x4\ngs     0x0\n")
		close(sp.ended)
	}
}

// result is shard i's result as hail writes it.
func (s *sim) result(spec *Spec, i, requests int, interrupted bool, at time.Time, failing bool) []byte {
	t := stats.NewTotals()
	for range requests {
		if failing {
			t.Errors[stats.ErrConnectRefused]++
			_ = t.LatencyBad.RecordValue(100_000)
			continue
		}
		_ = t.LatencyOK.RecordValue(1_000_000)
		t.Status[200]++
		t.LatencySum += 1_000_000
	}
	r := report.Build(report.Input{Totals: t, Elapsed: 2 * time.Second, Cores: 1, Start: at, Interrupted: interrupted,
		Config: map[string]any{"url": "http://10.88.0.9:8080/"}, Version: "test"})
	r.Hail.Shard = &result.Shard{Index: i, Count: spec.Shards, StartAt: at.UTC().Format(time.RFC3339Nano)}
	r.Hail.Verdict = result.Verdict{Bottleneck: result.BottleneckNone, Reasons: []string{"hail sent on time"}}
	var b bytes.Buffer
	if err := result.WriteJSON(&b, r); err != nil {
		s.t.Error(err)
	}
	return b.Bytes()
}

// finish ends a shard that wrote its result: in its log, or on the volume.
func (s *sim) finish(ctx context.Context, spec *Spec, sp *simPod, res []byte, code int32, _ string) {
	if spec.Claim != "" {
		if err := os.WriteFile(filepath.Join(s.results, filepath.Base(spec.resultPath(sp.index))), res, 0o644); err != nil {
			s.t.Error(err)
		}
	} else {
		sp.write("hail: warning: a line of hail's own before the result\n")
		sp.write(string(res))
	}
	if code == 4 {
		sp.write(fmt.Sprintf("hail: shard %d/%d was interrupted after 1s: its result is written, marked interrupted\n", sp.index, spec.Shards))
	}
	reason := "Completed"
	if code != 0 {
		reason = "Error"
	}
	s.terminate(ctx, sp.name, code, reason, "")
	close(sp.ended)
}

// terminate ends a pod's container with code.
func (s *sim) terminate(ctx context.Context, name string, code int32, reason, message string) {
	cur, err := get[corev1.Pod](s.cs, Pods, s.ns, name)
	if err != nil {
		return
	}
	cur.Status.Phase = corev1.PodSucceeded
	if code != 0 {
		cur.Status.Phase = corev1.PodFailed
	}
	cur.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: container, State: corev1.ContainerState{
		Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: reason, Message: message}}}}
	_ = s.cs.UpdateStatus(ctx, Pods, s.ns, cur)
}

func (sp *simPod) write(s string) {
	sp.mu.Lock()
	sp.log.WriteString(s)
	sp.mu.Unlock()
}

// helpers makes the volume helper pods ready, serving s.results.
func (s *sim) helpers(ctx context.Context, spec *Spec) {
	seen := map[string]bool{}
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(2 * time.Millisecond):
		}
		var list corev1.PodList
		if err := s.cs.List(ctx, Pods, s.ns, metav1.ListOptions{}, &list); err != nil {
			continue
		}
		for _, p := range list.Items {
			if p.Annotations[indexAnnotation] != "" || seen[p.Name+string(p.UID)+p.ResourceVersion] || len(p.Status.Conditions) > 0 {
				continue
			}
			seen[p.Name+string(p.UID)+p.ResourceVersion] = true
			tok := ""
			for _, e := range p.Spec.Containers[0].Env {
				if e.Name == TokenEnv {
					tok = e.Value
				}
			}
			fs := &FilesServer{Dir: s.results, Prefix: spec.Name + ".", Token: tok}
			fs.quit = make(chan struct{})
			s.mu.Lock()
			s.pods[p.Name] = &simPod{name: p.Name, files: fs.handler(), ended: make(chan struct{})}
			s.mu.Unlock()
			cur := p.DeepCopy()
			cur.Status.Phase = corev1.PodRunning
			cur.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
			_ = s.cs.UpdateStatus(ctx, Pods, s.ns, cur)
		}
	}
}

func (s *sim) pod(name string) *simPod {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pods[name]
}

// Logs implements podIO: a follower gets the log when the container ends.
func (s *sim) Logs(ctx context.Context, pod, _ string, follow bool) (io.ReadCloser, error) {
	sp := s.pod(pod)
	if sp == nil {
		return nil, apierrors.NewNotFound(corev1.Resource("pods"), pod)
	}
	if follow {
		select {
		case <-sp.ended:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	} else if _, err := get[corev1.Pod](s.cs, Pods, s.ns, pod); err != nil {
		return nil, err // a deleted pod's log is gone
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return io.NopCloser(bytes.NewReader(bytes.Clone(sp.log.Bytes()))), nil
}

// Proxy implements podIO: the shard's barrier and metrics, a helper's files.
func (s *sim) Proxy(ctx context.Context, method, pod string, port int, path string, query url.Values, header http.Header, body []byte) (int, io.ReadCloser, error) {
	sp := s.pod(pod)
	if sp == nil {
		return 503, io.NopCloser(strings.NewReader("no such pod")), nil
	}
	var h http.Handler
	switch {
	case port == barrierPort && sp.gate != nil:
		mux := http.NewServeMux()
		mux.Handle("/ready", sp.gate.Handler())
		mux.Handle("/start", sp.gate.Handler())
		mux.Handle("/stop", sp.gate.Handler())
		mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprintf(w, "# TYPE hail_requests_total counter\nhail_requests_total{shard=\"%d\"} %d\n", sp.index, sp.sent.Load())
		})
		h = mux
	case port == filesPort && sp.files != nil:
		h = sp.files
	default:
		return 503, io.NopCloser(strings.NewReader("connection refused")), nil
	}
	u := &url.URL{Path: path, RawQuery: query.Encode()}
	req := httptest.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(body))
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, io.NopCloser(bytes.NewReader(rec.Body.Bytes())), nil
}
