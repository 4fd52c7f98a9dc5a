package kube

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hail-loadgen/hail/internal/report"
	"github.com/hail-loadgen/hail/result"
)

// ServesHailRuns reports whether the cluster serves HailRuns in
// namespace ns: the CRD is installed (hail operator's chart), and this
// user may list them.
func ServesHailRuns(ctx context.Context, cs Cluster, ns string) bool {
	var l HailRunList
	return cs.List(ctx, HailRuns, ns, metav1.ListOptions{Limit: 1}, &l) == nil
}

// HailRun is the HailRun of a run whose files all fit its ConfigMap (a
// HailRun mounts no volume of hail kube's own but that one).
func (s *Spec) HailRun() *HailRun {
	res := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(s.CPU), corev1.ResourceMemory: resource.MustParse(s.Memory)},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(s.Memory)},
	}
	if s.CPULimit != "" {
		res.Limits[corev1.ResourceCPU] = resource.MustParse(s.CPULimit)
	}
	hr := &HailRun{
		TypeMeta:   metav1.TypeMeta{APIVersion: HailRunGroup.String(), Kind: "HailRun"},
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: s.Namespace, Labels: map[string]string{"app.kubernetes.io/managed-by": "hail-kube"}},
		Spec: HailRunSpec{Shards: s.Shards, Args: s.Args, Image: s.Image, Runner: RunnerTemplate{Resources: res},
			Results: ResultsSink{Claim: s.Claim}, ReadyTimeout: &metav1.Duration{Duration: s.ReadyTimeout}},
	}
	if s.KeepFor < 0 {
		hr.Spec.Cleanup = CleanupKeep
	}
	if len(s.Files) > 0 {
		hr.Spec.Runner.Volumes = []corev1.Volume{{Name: "shipped", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: s.Name + "-files"}}}}}
		for _, f := range s.Files {
			hr.Spec.Runner.VolumeMounts = append(hr.Spec.Runner.VolumeMounts, corev1.VolumeMount{Name: "shipped", MountPath: f.Path, SubPath: f.Key, ReadOnly: true})
		}
	}
	return hr
}

// TakenUpWithin is how long Submit waits for an operator to take a new
// HailRun up (its status gets a phase) before it gives up on it.
const TakenUpWithin = 15 * time.Second

func (r *Runner) takeUpWithin() time.Duration {
	if r.takeUp > 0 {
		return r.takeUp
	}
	return TakenUpWithin
}

// ErrNoOperator is Submit's error when no operator took the HailRun up:
// it was deleted again; the run can go as a Job of hail kube's own.
var ErrNoOperator = errors.New("no hail operator took the HailRun up")

// Submit runs s as a HailRun, for hail operator to run: the files in a
// ConfigMap NAME-files (owned by the HailRun), the HailRun, then its
// status followed — phases, shards that end other than well — until it
// ends; then the merged result (the HailRun's NAME-result ConfigMap) is
// written in Out/NAME/ and the text report printed. Ctrl-C asks the
// operator to stop the run (its shards stop; what they did is merged); a
// second one leaves it going. The HailRun stays, the run's record. The
// exit status is hail kube run's.
func (r *Runner) Submit(ctx context.Context, s *Spec, data map[string][]byte) (int, error) {
	if err := s.Check(); err != nil {
		return 1, err
	}
	for _, f := range s.Files {
		if f.OnVolume {
			return 1, fmt.Errorf("%s goes on the results volume: a HailRun ships files in a ConfigMap only", f.Path)
		}
	}
	if _, err := os.Stat(filepath.Join(r.Out, s.Name)); err == nil {
		return 1, fmt.Errorf("%s exists: give another --run or --out", filepath.Join(r.Out, s.Name))
	}
	hr := s.HailRun()
	if err := r.Client.Create(ctx, HailRuns, s.Namespace, hr); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return 1, fmt.Errorf("a HailRun named %s exists in namespace %s: give another --run (kubectl -n %s delete hailrun %s)", s.Name, s.Namespace, s.Namespace, s.Name)
		}
		return 1, fmt.Errorf("creating the HailRun: %v", err)
	}
	if len(s.Files) > 0 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: s.Name + "-files", Namespace: s.Namespace, Labels: s.labels(),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: HailRunGroup.String(), Kind: "HailRun", Name: hr.Name, UID: hr.UID}}},
			BinaryData: map[string][]byte{}}
		for _, f := range s.Files {
			cm.BinaryData[f.Key] = data[f.Key]
		}
		if err := r.Client.Create(ctx, ConfigMaps, s.Namespace, cm); err != nil {
			_ = r.Client.Delete(context.WithoutCancel(ctx), HailRuns, s.Namespace, s.Name, metav1.DeleteOptions{})
			return 1, fmt.Errorf("creating the run's files ConfigMap: %v", err)
		}
	}
	r.say("run %s: HailRun %s/%s of %d shards of `hail %s`, for hail operator (kubectl -n %s get hailrun %s)", s.Name, s.Namespace, s.Name, s.Shards, strings.Join(s.Args, " "), s.Namespace, s.Name)
	return r.followHailRun(ctx, s.Namespace, s.Name, true)
}

// CollectHailRun follows a HailRun (one hail kube run submitted and
// left) to its end and writes its merged result, as Submit does.
func (r *Runner) CollectHailRun(ctx context.Context, ns, name string) (int, error) {
	return r.followHailRun(ctx, ns, name, false)
}

// StopHailRun asks hail operator to stop a HailRun: its shards stop, and
// what they did is merged.
func (r *Runner) StopHailRun(ctx context.Context, ns, name, why string) error {
	// A merge patch of the annotation alone: an update would send the
	// spec back as this client encodes it (readyTimeout "3m" as "3m0s"),
	// which the CRD's immutability rule refuses as a change.
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{StopAnnotation: why}}})
	var hr HailRun
	if err := r.Client.MergePatch(ctx, HailRuns, ns, name, patch, &hr); err != nil {
		return fmt.Errorf("HailRun %s/%s: %v", ns, name, err)
	}
	return nil
}

// followHailRun follows the HailRun until it ends.
func (r *Runner) followHailRun(ctx context.Context, ns, name string, fresh bool) (int, error) {
	tick := time.NewTicker(max(r.every(), 500*time.Millisecond))
	defer tick.Stop()
	created := time.Now()
	phase, stops := "", 0
	said := map[int]string{}
	for {
		var hr HailRun
		err := r.Client.Get(ctx, HailRuns, ns, name, &hr)
		switch {
		case apierrors.IsNotFound(err):
			return 1, fmt.Errorf("HailRun %s/%s was deleted: its run is stopped", ns, name)
		case err != nil:
			r.say("reading HailRun %s/%s: %v", ns, name, err)
		default:
			st := hr.Status
			if st.Phase != phase {
				phase = st.Phase
				r.say("%s: %s", st.Phase, st.Message)
			}
			for _, sh := range st.Shards {
				if (sh.State == ShardFailed || sh.State == ShardInterrupted) && said[sh.Index] != sh.Reason {
					said[sh.Index] = sh.Reason
					r.say("shard %d: %s: %s", sh.Index, sh.State, sh.Reason)
				}
			}
			if phase == PhaseSucceeded || phase == PhaseFailed {
				return r.hailRunResult(ctx, &hr)
			}
			if phase == "" && fresh && time.Since(created) > r.takeUpWithin() {
				_ = r.Client.Delete(context.WithoutCancel(ctx), HailRuns, ns, name, metav1.DeleteOptions{})
				return 1, fmt.Errorf("%w within %s (is one installed and watching namespace %s?): deleted it again", ErrNoOperator, r.takeUpWithin(), ns)
			}
			if r.Detach && phase != "" {
				r.say("detached: HailRun %s goes on; collect it with: hail kube collect %s -n %s (stop it with hail kube stop %s -n %s)", name, name, ns, name, ns)
				return 0, nil
			}
		}
		select {
		case <-ctx.Done():
			return 1, ctx.Err()
		case <-r.Interrupts:
			stops++
			if stops > 1 {
				r.say("left going: HailRun %s/%s (hail kube collect %s -n %s later; kubectl -n %s delete hailrun %s stops it)", ns, name, name, ns, ns, name)
				return 130, nil
			}
			r.say("stopping: hail operator stops the shards and merges what they did (Ctrl-C again: leave it going)")
			if err := r.StopHailRun(context.WithoutCancel(ctx), ns, name, "the user stopped the run (hail kube)"); err != nil {
				r.say("could not ask for the stop: %v", err)
			}
		case <-tick.C:
		}
	}
}

// hailRunResult writes an ended HailRun's merged result in Out/NAME/,
// prints its report and returns hail kube run's exit status.
func (r *Runner) hailRunResult(ctx context.Context, hr *HailRun) (int, error) {
	st := hr.Status
	if st.Summary == nil || st.Result == nil || st.Result.ConfigMap == "" {
		return 1, fmt.Errorf("HailRun %s/%s failed: %s", hr.Namespace, hr.Name, st.Message)
	}
	var cm corev1.ConfigMap
	if err := r.Client.Get(ctx, ConfigMaps, hr.Namespace, st.Result.ConfigMap, &cm); err != nil {
		return 1, fmt.Errorf("the merged result (ConfigMap %s): %v", st.Result.ConfigMap, err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(cm.BinaryData["total.json.gz"]))
	if err != nil {
		return 1, fmt.Errorf("the merged result (ConfigMap %s): %v", st.Result.ConfigMap, err)
	}
	merged, err := result.ReadJSON(zr)
	if err != nil {
		return 1, fmt.Errorf("the merged result (ConfigMap %s): %v", st.Result.ConfigMap, err)
	}
	dir, err := r.runDir(&Spec{Name: hr.Name})
	if err != nil {
		return 1, err
	}
	var js, html bytes.Buffer
	if err := result.WriteJSON(&js, merged); err != nil {
		return 1, err
	}
	_ = report.WriteHTML(&html, merged)
	total, page := filepath.Join(dir, "total.json"), filepath.Join(dir, "report.html")
	if err := os.WriteFile(total, js.Bytes(), 0o644); err != nil {
		return 1, err
	}
	if err := os.WriteFile(page, html.Bytes(), 0o644); err != nil {
		return 1, err
	}
	status, _ := json.MarshalIndent(hr.Status, "", "  ")
	_ = os.WriteFile(filepath.Join(dir, "hailrun-status.json"), status, 0o644)
	if err := report.WriteText(r.Stdout, merged, report.TextOptions{}); err != nil {
		return 1, err
	}
	if m := merged.Hail.Merged; m != nil {
		for _, o := range m.PerShard {
			r.say("%s", report.OutcomeLine(o, hr.Spec.Shards))
		}
	}
	r.say("merged result: %s; report: %s (the HailRun stays, the run's record: kubectl -n %s delete hailrun %s)", total, page, hr.Namespace, hr.Name)
	if st.Phase == PhaseSucceeded {
		return 0, nil
	}
	r.say("%s", st.Message)
	for _, c := range st.Conditions {
		if c.Type == "Merged" && c.Reason == "NoSuccess" {
			return exitNoSuccess, nil
		}
	}
	return 2, nil
}
