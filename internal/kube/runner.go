package kube

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/hail-loadgen/hail/internal/barrier"
)

// Runner runs, collects and stops distributed runs on one cluster.
type Runner struct {
	// Client is the cluster's API.
	Client Cluster
	// Out is the directory each run's results go in (Out/RUN/).
	Out string
	// Stdout gets the merged text report; Stderr hail kube's messages and
	// progress.
	Stdout, Stderr io.Writer
	// Terminal says Stderr is a terminal: the progress line is redrawn in
	// place rather than printed every ProgressEvery.
	Terminal bool
	// Interrupts receives a value at each Ctrl-C (SIGINT or SIGTERM).
	Interrupts <-chan struct{}
	// Ask, when set (stdin is a terminal), asks the question and returns
	// the answer: Ctrl-C during a run asks whether to stop or detach.
	// Without it, Ctrl-C stops the run.
	Ask func(question string) (string, error)
	// Keep keeps the run's Job, pods and ConfigMap once collected (else
	// they are deleted: the results are here).
	Keep bool
	// Detach returns as soon as the run has started (collect it later).
	Detach bool
	// Report, when set, is told the run's phase (PhaseWaiting,
	// PhaseRunning, PhaseMerging) and its shards' states as the cluster
	// says them, at every change it sees (the operator writes them in a
	// HailRun's status).
	Report func(phase string, shards []ShardStatus)

	io     podIO         // nil: through Client
	tick   time.Duration // how often the barrier and progress poll (0: 250 ms)
	lead   time.Duration // the start's least lead (0: MinLead; tests shorten it)
	takeUp time.Duration // how long Submit waits for an operator (0: TakenUpWithin)

	barrierToken map[string][]string // the header /start and /stop carry

	outMu sync.Mutex
	line  bool // a progress line is on the terminal
}

// NewRunner returns a Runner on the cluster cs.
func NewRunner(cs Cluster) *Runner {
	return &Runner{Client: cs, Out: ".", Stdout: os.Stdout, Stderr: os.Stderr}
}

func (r *Runner) podIO(ns string) podIO {
	if r.io != nil {
		return r.io
	}
	return clusterIO{cs: r.Client, namespace: ns}
}

// bind makes the Runner talk to the pods of s's namespace, with its
// barriers' token.
func (r *Runner) bind(s *Spec) {
	if r.io == nil {
		r.io = clusterIO{cs: r.Client, namespace: s.Namespace}
	}
	r.barrierToken = map[string][]string{barrier.TokenHeader: {s.Token}}
}

func (r *Runner) every() time.Duration {
	if r.tick > 0 {
		return r.tick
	}
	return 250 * time.Millisecond
}

// say prints one of hail kube's lines on Stderr.
func (r *Runner) say(format string, args ...any) {
	r.outMu.Lock()
	defer r.outMu.Unlock()
	if r.line {
		fmt.Fprint(r.Stderr, "\r\x1b[K")
		r.line = false
	}
	fmt.Fprintf(r.Stderr, "hail kube: "+format+"\n", args...)
}

// progress shows the progress line: in place on a terminal.
func (r *Runner) progress(text string) {
	r.outMu.Lock()
	defer r.outMu.Unlock()
	if r.Terminal {
		fmt.Fprint(r.Stderr, "\r\x1b[K"+text)
		r.line = true
		return
	}
	fmt.Fprintln(r.Stderr, "hail kube: "+text)
}

// runDir is the run's local directory, made when first needed.
func (r *Runner) runDir(s *Spec) (string, error) {
	dir := filepath.Join(r.Out, s.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("the results directory: %v", err)
	}
	return dir, nil
}

// NewToken is a random token: a run's barrier token (Spec.Token), a
// volume helper's.
func NewToken() string { return token() }

// token is a random token.
func token() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// checkFresh refuses a run whose name is taken, in the cluster or here.
func (r *Runner) checkFresh(ctx context.Context, s *Spec) error {
	if err := r.Client.Get(ctx, Jobs, s.Namespace, s.Name, &batchv1.Job{}); err == nil {
		return fmt.Errorf("a run named %s exists in namespace %s: give another --run, or collect it (hail kube collect %s -n %s) or stop it", s.Name, s.Namespace, s.Name, s.Namespace)
	} else if !apierrors.IsNotFound(err) {
		return fmt.Errorf("the cluster: %v", err)
	}
	if err := r.Client.Get(ctx, ConfigMaps, s.Namespace, s.Name, &corev1.ConfigMap{}); err == nil {
		return fmt.Errorf("a ConfigMap named %s exists in namespace %s: give another --run", s.Name, s.Namespace)
	}
	if _, err := os.Stat(filepath.Join(r.Out, s.Name)); err == nil {
		return fmt.Errorf("%s exists: give another --run or --out", filepath.Join(r.Out, s.Name))
	}
	return nil
}

// checkClaim checks the results claim before anything is made: it must be
// there and bound, or wait for its first consumer.
func (r *Runner) checkClaim(ctx context.Context, s *Spec) error {
	if s.Claim == "" {
		return nil
	}
	var pvc corev1.PersistentVolumeClaim
	err := r.Client.Get(ctx, Claims, s.Namespace, s.Claim, &pvc)
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("--results pvc:%s: no such claim in namespace %s (see docs/distributed.md for the storage it needs)", s.Claim, s.Namespace)
	} else if err != nil {
		return fmt.Errorf("--results pvc:%s: %v", s.Claim, err)
	}
	switch pvc.Status.Phase {
	case corev1.ClaimBound:
		return nil
	case corev1.ClaimLost:
		return fmt.Errorf("--results pvc:%s: the claim is Lost (its volume is gone): %s", s.Claim, s.hint("describe pvc", s.Claim))
	}
	// Pending: fine only when its storage class binds at the first pod.
	if sc := pvc.Spec.StorageClassName; sc != nil && *sc != "" {
		var cls storagev1.StorageClass
		if err := r.Client.Get(ctx, StorageClasses, "", *sc, &cls); err == nil &&
			cls.VolumeBindingMode != nil && *cls.VolumeBindingMode == "WaitForFirstConsumer" {
			return nil
		}
	}
	return fmt.Errorf("--results pvc:%s: the claim is Pending (not bound to a volume): %s", s.Claim, s.hint("describe pvc", s.Claim))
}

// create makes the run's objects: the ConfigMap (its spec and files), the
// files too large for it on the volume, then the Job, which owns the
// ConfigMap (so Kubernetes deletes both together).
func (r *Runner) create(ctx context.Context, s *Spec, data map[string][]byte) error {
	if err := r.Client.Create(ctx, ConfigMaps, s.Namespace, s.ConfigMap(data)); err != nil {
		return fmt.Errorf("creating the run's ConfigMap: %v", err)
	}
	if err := r.stage(ctx, s, data); err != nil {
		return err
	}
	job := s.Job()
	if err := r.Client.Create(ctx, Jobs, s.Namespace, job); err != nil {
		return fmt.Errorf("creating the shards' Job: %v", err)
	}
	var cm corev1.ConfigMap
	err := r.Client.Get(ctx, ConfigMaps, s.Namespace, s.Name, &cm)
	if err == nil {
		cm.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: job.UID}}
		err = r.Client.Update(ctx, ConfigMaps, s.Namespace, &cm)
	}
	if err != nil {
		return fmt.Errorf("giving the ConfigMap to the Job: %v", err)
	}
	return nil
}

// cleanup deletes what the run made in the cluster (what is not there is
// fine): the Job and its pods, the ConfigMap, the helper pods.
func (r *Runner) cleanup(ctx context.Context, s *Spec) {
	bg := metav1.DeletePropagationBackground
	del := metav1.DeleteOptions{PropagationPolicy: &bg}
	var errs []string
	if err := r.Client.Delete(ctx, Jobs, s.Namespace, s.Name, del); err != nil && !apierrors.IsNotFound(err) {
		errs = append(errs, "the Job: "+err.Error())
	}
	if err := r.Client.Delete(ctx, ConfigMaps, s.Namespace, s.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		errs = append(errs, "the ConfigMap: "+err.Error())
	}
	for _, p := range []string{s.Name + "-stage", s.Name + "-fetch"} {
		if err := r.Client.Delete(ctx, Pods, s.Namespace, p, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, p+": "+err.Error())
		}
	}
	if len(errs) > 0 {
		r.say("could not delete everything: %s (%s)", strings.Join(errs, "; "), s.hint("delete job,configmap,pod -l", LabelRun+"="+s.Name))
	}
}

// LoadSpec reads a run's Spec back from its ConfigMap.
func (r *Runner) LoadSpec(ctx context.Context, namespace, name string) (*Spec, error) {
	var cm corev1.ConfigMap
	err := r.Client.Get(ctx, ConfigMaps, namespace, name, &cm)
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("no run named %s in namespace %s (its ConfigMap is gone: deleted, or the finished run was kept its time and removed)", name, namespace)
	} else if err != nil {
		return nil, fmt.Errorf("the cluster: %v", err)
	}
	s, err := unmarshalSpec(cm.Data[specKey])
	if err != nil || s.Name != name {
		return nil, fmt.Errorf("ConfigMap %s in %s is not a hail kube run's", name, namespace)
	}
	return s, nil
}

// saveSpec writes s back into the run's ConfigMap.
func (r *Runner) saveSpec(ctx context.Context, s *Spec) error {
	var cm corev1.ConfigMap
	if err := r.Client.Get(ctx, ConfigMaps, s.Namespace, s.Name, &cm); err != nil {
		return err
	}
	cm.Data[specKey] = s.marshal()
	return r.Client.Update(ctx, ConfigMaps, s.Namespace, &cm)
}

// helperPod starts a volume helper pod named name and waits until it
// serves, failing at once when it cannot start.
func (r *Runner) helperPod(ctx context.Context, s *Spec, name string) (string, error) {
	tok := token()
	pod := s.FilesPod(tok)
	pod.Name = name
	_ = r.Client.Delete(ctx, Pods, s.Namespace, name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(r.every()) {
		err := r.Client.Create(ctx, Pods, s.Namespace, pod)
		if err == nil {
			break
		}
		if !apierrors.IsAlreadyExists(err) || time.Now().After(end) {
			return "", fmt.Errorf("creating the volume helper pod %s: %v", name, err)
		}
	}
	end := time.Now().Add(2 * time.Minute)
	for {
		p := &corev1.Pod{}
		if err := r.Client.Get(ctx, Pods, s.Namespace, name, p); err != nil {
			return "", fmt.Errorf("the volume helper pod %s: %v", name, err)
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				return tok, nil
			}
		}
		st := stateOf(0, p, false, nil)
		for _, cs := range p.Status.ContainerStatuses {
			if cs.State.Waiting != nil {
				st.waiting, st.waitingMsg = cs.State.Waiting.Reason, cs.State.Waiting.Message
			}
			if t := cs.State.Terminated; t != nil {
				st.started, st.ended, st.exit, st.reason, st.message = true, true, t.ExitCode, t.Reason, t.Message
			}
		}
		if why := st.fatal(s); why != "" {
			return "", fmt.Errorf("the volume helper pod %s cannot start: %s", name, why)
		}
		if st.ended {
			return "", fmt.Errorf("the volume helper pod %s ended: %s %s (%s)", name, st.reason, oneLine(st.message), s.hint("logs", name))
		}
		if time.Now().After(end) {
			return "", fmt.Errorf("the volume helper pod %s was not ready in 2m: %s (%s)", name, st.waitingFor(), s.hint("describe pod", name))
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(r.every()):
		}
	}
}

// endHelper asks a helper pod to quit and deletes it.
func (r *Runner) endHelper(ctx context.Context, s *Spec, name, tok string) {
	_, _ = proxyBody(ctx, r.podIO(s.Namespace), "POST", name, filesPort, "/quit", nil, tokenHeaders(tok), nil)
	_ = r.Client.Delete(ctx, Pods, s.Namespace, name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
}

func tokenHeaders(tok string) map[string][]string { return map[string][]string{tokenHeader: {tok}} }

// stage puts the files too large for the ConfigMap on the volume.
func (r *Runner) stage(ctx context.Context, s *Spec, data map[string][]byte) error {
	var on []File
	for _, f := range s.Files {
		if f.OnVolume {
			on = append(on, f)
		}
	}
	if len(on) == 0 {
		return nil
	}
	name := s.Name + "-stage"
	r.say("staging %d file(s) on claim %s (too large for the ConfigMap)", len(on), s.Claim)
	tok, err := r.helperPod(ctx, s, name)
	if err != nil {
		return err
	}
	defer r.endHelper(ctx, s, name, tok)
	for _, f := range on {
		if _, err := proxyBody(ctx, r.podIO(s.Namespace), "PUT", name, filesPort, "/files/"+s.volumeKey(f), nil, tokenHeaders(tok), data[f.Key]); err != nil {
			return fmt.Errorf("staging %s on the volume: %v", f.Path, err)
		}
	}
	return nil
}

// putFiles writes files (names starting with the run's name and a dot)
// on the run's results volume, through a helper pod.
func (r *Runner) putFiles(ctx context.Context, s *Spec, files map[string][]byte) error {
	name := s.Name + "-stage"
	tok, err := r.helperPod(ctx, s, name)
	if err != nil {
		return err
	}
	defer r.endHelper(ctx, s, name, tok)
	for n, b := range files {
		if _, err := proxyBody(ctx, r.podIO(s.Namespace), "PUT", name, filesPort, "/files/"+n, nil, tokenHeaders(tok), b); err != nil {
			return fmt.Errorf("writing %s on the volume: %v", n, err)
		}
	}
	return nil
}

// errInterrupted ends a run stopped before its start.
var errInterrupted = errors.New("interrupted before the start: nothing was sent")
