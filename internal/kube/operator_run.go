package kube

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/hail-loadgen/hail/internal/report"
	"github.com/hail-loadgen/hail/internal/scenario/threshold"
	"github.com/hail-loadgen/hail/result"
)

// execute runs one HailRun to its end (or adopts one under way: its
// Job is there, its start published) and writes its status. It returns
// without a last status when ctx ends: the HailRun was deleted, or this
// replica stopped leading.
func (o *Operator) execute(ctx context.Context, hr *HailRun, t *tracked, adopt bool) {
	o.metrics.started.Inc()
	st := &statusWriter{o: o, ns: hr.Namespace, name: hr.Name, uid: hr.UID, gen: hr.Generation, status: hr.Status}
	out, err := os.MkdirTemp("", "hailrun-")
	if err != nil {
		st.fail(ctx, "Internal", err.Error())
		return
	}
	defer os.RemoveAll(out)
	r := o.runner(hr.Namespace, hr.Name, out)
	r.Keep = hr.Spec.Cleanup == CleanupKeep
	r.Report = func(phase string, shards []ShardStatus) { st.progress(ctx, phase, shards) }

	var spec *Spec
	var ths []*threshold.Threshold
	var code int
	if adopt {
		o.logf("%s/%s is under way and no replica runs it: collecting it", hr.Namespace, hr.Name)
		if spec, err = r.LoadSpec(ctx, hr.Namespace, hr.Name); err == nil {
			o.track(t, spec)
			ths, _ = parseThresholds(hr.Spec.Thresholds)
			go func() { // a stop asked: as hail kube stop, then the collect merges
				select {
				case <-t.interrupts:
					_ = r.Stop(ctx, spec)
				case <-ctx.Done():
				}
			}()
			if hr.Annotations[StopAnnotation] != "" {
				o.mu.Lock()
				t.stopped = true
				t.stop()
				o.mu.Unlock()
			}
			code, err = r.Collect(ctx, spec)
		}
	} else if why := hr.Annotations[StopAnnotation]; why != "" {
		st.fail(ctx, "Stopped", "stopped before it started ("+why+"): nothing was sent")
		return
	} else {
		r.Interrupts = t.interrupts
		st.set(ctx, func(s *HailRunStatus) {
			s.Phase, s.Message, s.Job = PhaseValidating, "checking the run's arguments with hail's own parsing", hr.Name
			setCondition(s, "Validated", metav1.ConditionUnknown, "Validating", "")
		})
		// A HailRun made again under the same name while the last one's
		// objects are still going: theirs are not this run's.
		o.leftovers(ctx, hr)
		spec, ths, err = o.plan(ctx, hr)
		if err != nil {
			st.fail(ctx, "InvalidSpec", err.Error())
			return
		}
		o.track(t, spec)
		st.set(ctx, func(s *HailRunStatus) {
			s.Phase, s.Message = PhaseWaiting, fmt.Sprintf("starting %d shards; nothing is sent until every one is ready", spec.Shards)
			setCondition(s, "Validated", metav1.ConditionTrue, "Valid", "")
		})
		code, err = r.Run(ctx, spec, nil)
	}
	if ctx.Err() != nil {
		return
	}
	if err != nil && !errors.Is(err, errNothing) {
		st.fail(ctx, "NotStarted", err.Error())
		return
	}
	o.finish(ctx, st, r, spec, hr, ths, code, err, out)
}

// track records the run's spec, for a deletion to clean up after.
func (o *Operator) track(t *tracked, s *Spec) {
	o.mu.Lock()
	t.spec = s
	o.mu.Unlock()
}

// leftovers deletes what an earlier run of a HailRun of the same name
// left: this one's, started by a leader that stopped before the start
// (nothing was sent: the run starts afresh), or a deleted HailRun's whose
// Job is still going.
func (o *Operator) leftovers(ctx context.Context, hr *HailRun) {
	s := &Spec{Name: hr.Name, Namespace: hr.Namespace}
	r := o.runner(hr.Namespace, hr.Name, "")
	var cm corev1.ConfigMap
	if err := o.Client.Get(ctx, ConfigMaps, hr.Namespace, hr.Name, &cm); err == nil {
		if old, err := unmarshalSpec(cm.Data[specKey]); err == nil && old.Owner != nil && old.Owner.Kind == "HailRun" && old.Owner.Name == hr.Name {
			r.cleanup(ctx, s)
			// Wait until the Job is gone: the new one has its name.
			for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
				if err := o.Client.Get(ctx, Jobs, hr.Namespace, hr.Name, &batchv1.Job{}); isGone(err) {
					break
				}
			}
		}
	}
}

// plan checks a HailRun and makes its run's Spec: hail's own parsing of
// its arguments (and its scenario, from its ConfigMap), its thresholds,
// its runner template.
func (o *Operator) plan(ctx context.Context, hr *HailRun) (*Spec, []*threshold.Threshold, error) {
	h := hr.Spec
	if h.Shards < 1 || h.Shards > 1000 {
		return nil, nil, fmt.Errorf("spec.shards %d: give 1 to 1000", h.Shards)
	}
	if h.Cleanup != "" && h.Cleanup != CleanupDelete && h.Cleanup != CleanupKeep {
		return nil, nil, fmt.Errorf("spec.cleanup %q: give Delete or Keep", h.Cleanup)
	}
	ths, err := parseThresholds(h.Thresholds)
	if err != nil {
		return nil, nil, err
	}
	for _, v := range h.Runner.Volumes {
		if v.Name == "files" || v.Name == "results" || v.Name == "scenario" {
			return nil, nil, fmt.Errorf("spec.runner.volumes: %q is the operator's own volume name: give another", v.Name)
		}
	}
	extras := &PodExtras{NodeSelector: h.Runner.NodeSelector, Tolerations: h.Runner.Tolerations, Affinity: h.Runner.Affinity,
		Env: h.Runner.Env, Volumes: h.Runner.Volumes, VolumeMounts: h.Runner.VolumeMounts}
	args := h.Args
	var check []string
	if sc := h.Scenario; sc != nil {
		if sc.ConfigMap == hr.Name {
			return nil, nil, fmt.Errorf("spec.scenario.configMap %s: the run's own ConfigMap takes the HailRun's name: give the scenario's ConfigMap another name", sc.ConfigMap)
		}
		dir, err := o.scenarioFiles(ctx, hr.Namespace, sc)
		if err != nil {
			return nil, nil, err
		}
		defer os.RemoveAll(dir)
		check = append([]string{"run", filepath.Join(dir, sc.File)}, h.Args...)
		args = append([]string{"run", ScenarioDir + "/" + sc.File}, h.Args...)
		extras.Volumes = append(extras.Volumes, corev1.Volume{Name: "scenario", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: sc.ConfigMap}}}})
		extras.VolumeMounts = append(extras.VolumeMounts, corev1.VolumeMount{Name: "scenario", MountPath: ScenarioDir, ReadOnly: true})
	} else {
		if len(args) == 0 {
			return nil, nil, fmt.Errorf("spec: give args (hail's, e.g. [-z, 30s, -q, \"1000\", http://svc:8080/]) or a scenario")
		}
		check = args
	}
	var length time.Duration
	if o.Validate != nil {
		if length, err = o.Validate(check); err != nil {
			return nil, nil, fmt.Errorf("spec.args: %v", err)
		}
	}
	res := h.Runner.Resources
	qty := func(l corev1.ResourceList, n corev1.ResourceName, def string) string {
		if q, ok := l[n]; ok {
			return q.String()
		}
		return def
	}
	memory := qty(res.Limits, corev1.ResourceMemory, qty(res.Requests, corev1.ResourceMemory, "256Mi"))
	image := h.Image
	if image == "" {
		image = o.Image
	}
	readyTimeout := 3 * time.Minute
	if h.ReadyTimeout != nil {
		readyTimeout = h.ReadyTimeout.Duration
	}
	keepFor := time.Hour // the operator deletes it once merged; this is the fallback
	if h.Cleanup == CleanupKeep {
		keepFor = -1
	}
	s := &Spec{Name: hr.Name, Namespace: hr.Namespace, Shards: h.Shards, Image: image,
		CPU: qty(res.Requests, corev1.ResourceCPU, "500m"), Memory: memory, CPULimit: qty(res.Limits, corev1.ResourceCPU, ""),
		Claim: h.Results.Claim, Args: args, Duration: length, ReadyTimeout: readyTimeout, KeepFor: keepFor,
		Created: time.Now().UTC(), Token: NewToken(), Pod: extras,
		Owner: &metav1.OwnerReference{APIVersion: HailRunGroup.String(), Kind: "HailRun", Name: hr.Name, UID: hr.UID,
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
	if err := s.Check(); err != nil {
		return nil, nil, fmt.Errorf("the HailRun: %v", strings.NewReplacer("--run", "metadata.name", "--image", "spec.image", "--ready-timeout", "spec.readyTimeout",
			"--cpu-limit", "spec.runner.resources.limits.cpu", "--cpu", "spec.runner.resources.requests.cpu", "--memory", "spec.runner.resources memory").Replace(err.Error()))
	}
	return s, ths, nil
}

func parseThresholds(exprs []string) ([]*threshold.Threshold, error) {
	var out []*threshold.Threshold
	for _, e := range exprs {
		t, err := threshold.Parse(e)
		if err != nil {
			return nil, fmt.Errorf("spec.thresholds: %v", err)
		}
		out = append(out, t)
	}
	return out, nil
}

// scenarioFiles writes a scenario ConfigMap's files in a new directory,
// for hail's parsing to read them as the shards will.
func (o *Operator) scenarioFiles(ctx context.Context, ns string, sc *ScenarioSource) (string, error) {
	var cm corev1.ConfigMap
	if err := o.Client.Get(ctx, ConfigMaps, ns, sc.ConfigMap, &cm); err != nil {
		if isGone(err) {
			return "", fmt.Errorf("spec.scenario.configMap %s: no such ConfigMap in namespace %s", sc.ConfigMap, ns)
		}
		return "", fmt.Errorf("spec.scenario.configMap %s: %v", sc.ConfigMap, err)
	}
	_, inData := cm.Data[sc.File]
	_, inBinary := cm.BinaryData[sc.File]
	if !inData && !inBinary {
		return "", fmt.Errorf("spec.scenario.file %q: ConfigMap %s has no such key", sc.File, sc.ConfigMap)
	}
	dir, err := os.MkdirTemp("", "hailrun-scenario-")
	if err != nil {
		return "", err
	}
	for k, v := range cm.Data {
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(k)), []byte(v), 0o600); err != nil {
			return dir, err
		}
	}
	for k, v := range cm.BinaryData {
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(k)), v, 0o600); err != nil {
			return dir, err
		}
	}
	return dir, nil
}

// finish writes the end of a run in its status: the merged summary,
// verdict, shards and thresholds, where the full result is, and the
// phase: Succeeded when it is complete and every threshold held.
func (o *Operator) finish(ctx context.Context, st *statusWriter, r *Runner, spec *Spec, hr *HailRun, ths []*threshold.Threshold, code int, runErr error, out string) {
	var merged *result.Result
	if f, err := os.Open(filepath.Join(out, spec.Name, "total.json")); err == nil {
		merged, _ = result.ReadJSON(f)
		f.Close()
	}
	if merged == nil {
		why := "nothing to merge"
		if runErr != nil {
			why = runErr.Error()
		}
		st.fail(ctx, "NothingMerged", why)
		return
	}
	failed := 0
	if len(ths) > 0 {
		failed = threshold.Evaluate(ths, merged)
	}
	var js bytes.Buffer
	_ = result.WriteJSON(&js, merged)
	ref, storeErr := o.storeResult(ctx, r, spec, hr, js.Bytes())
	st.set(ctx, func(s *HailRunStatus) {
		s.Summary, s.Verdict, s.Shards = summarize(merged, spec.Shards)
		s.Incomplete = nil
		if m := merged.Hail.Merged; m != nil {
			s.Incomplete = m.Incomplete
		}
		s.Thresholds = nil
		for _, t := range merged.Hail.Thresholds {
			if len(ths) > 0 {
				s.Thresholds = append(s.Thresholds, ThresholdStatus{Expr: t.Expr, Measured: t.Measured, Pass: t.Pass})
			}
		}
		s.Result = ref
		s.CompletionTime = ptr.To(metav1.Now())
		s.Phase, s.Message = PhaseSucceeded, fmt.Sprintf("merged %d requests of %d shards", merged.Hail.Counts.Requests, spec.Shards)
		reason, msg := "Complete", ""
		switch {
		case code == exitNoSuccess:
			s.Phase, reason, msg = PhaseFailed, "NoSuccess", "no request succeeded on any shard"
		case len(s.Incomplete) > 0:
			s.Phase, reason, msg = PhaseFailed, "Incomplete", "the run is incomplete: "+s.Incomplete[0]
		case code == exitThresholds:
			s.Phase, reason, msg = PhaseFailed, "ScenarioThresholdsFailed", "a scenario threshold failed on a shard (its result says which)"
		}
		if msg != "" {
			s.Message = msg
		}
		setCondition(s, "Merged", metav1.ConditionTrue, reason, s.Message)
		if len(ths) > 0 {
			if failed > 0 {
				s.Phase = PhaseFailed
				s.Message = fmt.Sprintf("%d of %d thresholds failed on the merged result", failed, len(ths))
				setCondition(s, "ThresholdsPassed", metav1.ConditionFalse, "ThresholdsFailed", s.Message)
			} else {
				setCondition(s, "ThresholdsPassed", metav1.ConditionTrue, "ThresholdsHeld", "")
			}
		}
		if storeErr != nil {
			s.Message += "; the full result could not be stored: " + storeErr.Error()
		}
	})
	o.logf("%s/%s: %s: %s", hr.Namespace, hr.Name, st.status.Phase, st.status.Message)
}

// storeResult keeps the full merged result: gzipped in a ConfigMap
// NAME-result owned by the HailRun (deleted with it), and on the results
// claim when the run has one.
func (o *Operator) storeResult(ctx context.Context, r *Runner, spec *Spec, hr *HailRun, js []byte) (*ResultRef, error) {
	ref := &ResultRef{}
	var errs []string
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(js)
	_ = zw.Close()
	if gz.Len() <= MaxConfigMapFiles {
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: hr.Name + "-result", Namespace: hr.Namespace, Labels: spec.labels(),
				OwnerReferences: []metav1.OwnerReference{{APIVersion: HailRunGroup.String(), Kind: "HailRun", Name: hr.Name, UID: hr.UID}}},
			BinaryData: map[string][]byte{"total.json.gz": gz.Bytes()},
		}
		err := o.Client.Create(ctx, ConfigMaps, hr.Namespace, cm)
		if err != nil && !isGone(err) {
			var cur corev1.ConfigMap
			if o.Client.Get(ctx, ConfigMaps, hr.Namespace, cm.Name, &cur) == nil {
				cur.BinaryData = cm.BinaryData
				err = o.Client.Update(ctx, ConfigMaps, hr.Namespace, &cur)
			}
		}
		if err != nil {
			errs = append(errs, "ConfigMap "+cm.Name+": "+err.Error())
		} else {
			ref.ConfigMap = cm.Name
		}
	} else {
		errs = append(errs, fmt.Sprintf("%d KiB gzipped, more than a ConfigMap holds", gz.Len()>>10))
	}
	if spec.Claim != "" {
		name := spec.Name + ".total.json"
		if err := r.putFiles(ctx, spec, map[string][]byte{name: js}); err != nil {
			errs = append(errs, "claim "+spec.Claim+": "+err.Error())
		} else {
			ref.Claim, ref.Path = spec.Claim, resultsDir+"/"+name
		}
	}
	if len(errs) > 0 {
		return ref, errors.New(strings.Join(errs, "; "))
	}
	return ref, nil
}

// summarize is a HailRun's status of a merged result.
func summarize(m *result.Result, shards int) (*RunSummary, *RunVerdict, []ShardStatus) {
	c := m.Hail.Counts
	dur := func(sec float64) string { return time.Duration(sec * 1e9).Round(time.Microsecond).String() }
	sum := &RunSummary{Requests: c.Requests, Responses: c.Responses, Errors: c.Errors,
		SuccessRate: fmt.Sprintf("%.2f%%", m.Summary.SuccessRate*100), RequestsPerSecond: fmt.Sprintf("%.1f", m.Summary.RequestsPerSec),
		P50: dur(m.LatencyPercentiles.P50.Seconds()), P99: dur(m.LatencyPercentiles.P99.Seconds()), Max: dur(m.Summary.Slowest.Seconds()),
		Seconds: fmt.Sprintf("%.2f", m.Summary.Total.Seconds())}
	v := &RunVerdict{Bottleneck: m.Hail.Verdict.Bottleneck, Reasons: m.Hail.Verdict.Reasons}
	out := make([]ShardStatus, shards)
	for i := range out {
		out[i] = ShardStatus{Index: i, State: ShardComplete}
	}
	if mm := m.Hail.Merged; mm != nil {
		for _, ps := range mm.PerShard {
			if ps.Index < 0 || ps.Index >= shards {
				continue
			}
			state := map[string]string{report.OutcomeComplete: ShardComplete, report.OutcomeLate: ShardLate, report.OutcomeInterrupted: ShardInterrupted,
				report.OutcomeFailed: ShardFailed, report.OutcomeMissing: ShardMissing}[ps.Outcome]
			out[ps.Index] = ShardStatus{Index: ps.Index, State: state, Reason: ps.Reason, Requests: ps.Requests}
		}
	} else if shards == 1 {
		out[0].Requests = c.Requests
	}
	return sum, v, out
}

// statusWriter writes one HailRun's status: it keeps the status it last
// wrote, and writes a change of phase at once, a change of the shards'
// states at most once a second.
type statusWriter struct {
	o       *Operator
	ns      string
	name    string
	uid     types.UID
	gen     int64
	status  HailRunStatus
	written time.Time
}

// progress takes a Runner's report.
func (w *statusWriter) progress(ctx context.Context, phase string, shards []ShardStatus) {
	if phase == w.status.Phase && (reflect.DeepEqual(shards, w.status.Shards) || time.Since(w.written) < time.Second) {
		return
	}
	w.set(ctx, func(s *HailRunStatus) {
		if phase != s.Phase {
			switch phase {
			case PhaseWaiting:
				s.Message = "waiting for every shard to be ready at the start barrier; nothing is sent before"
			case PhaseRunning:
				s.Message = "the shards started together"
				if s.StartTime == nil {
					s.StartTime = ptr.To(metav1.Now())
				}
				setCondition(s, "Started", metav1.ConditionTrue, "Started", "every shard was ready: they started together")
			case PhaseMerging:
				s.Message = "the shards ended: collecting and merging their results"
			}
		}
		s.Phase, s.Shards = phase, shards
	})
}

// fail ends the run Failed, with the reason.
func (w *statusWriter) fail(ctx context.Context, reason, msg string) {
	w.set(ctx, func(s *HailRunStatus) {
		if s.Phase == PhaseValidating {
			setCondition(s, "Validated", metav1.ConditionFalse, reason, msg)
		} else {
			setCondition(s, "Merged", metav1.ConditionFalse, reason, msg)
		}
		s.Phase, s.Message = PhaseFailed, msg
		s.CompletionTime = ptr.To(metav1.Now())
	})
	w.o.logf("%s/%s: Failed: %s", w.ns, w.name, msg)
}

// set changes the status with f and writes it (on the HailRun as it is
// now: a conflict is read again and retried).
func (w *statusWriter) set(ctx context.Context, f func(s *HailRunStatus)) {
	was := w.status.Phase
	f(&w.status)
	if p := w.status.Phase; p != was && (p == PhaseSucceeded || p == PhaseFailed) {
		w.o.metrics.ended.WithLabelValues(p).Inc() // counted before the status says so
	}
	w.status.ObservedGeneration = w.gen
	w.written = time.Now()
	for try := 0; try < 5; try++ {
		var cur HailRun
		if err := w.o.Client.Get(ctx, HailRuns, w.ns, w.name, &cur); err != nil {
			return // gone (deleted), or the API server away: the next write carries it
		}
		if cur.UID != w.uid {
			return
		}
		cur.Status = *w.status.DeepCopy()
		err := w.o.Client.UpdateStatus(ctx, HailRuns, w.ns, &cur)
		if err == nil {
			w.o.metrics.writes.Inc()
			return
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// DeepCopy copies the status.
func (s *HailRunStatus) DeepCopy() *HailRunStatus { return deepCopy(s) }

// setCondition sets a condition, its transition time kept when its
// status does not change.
func setCondition(s *HailRunStatus, typ string, status metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&s.Conditions, metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg})
}
