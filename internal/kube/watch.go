package kube

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// indexAnnotation is where an Indexed Job writes a pod's index.
const indexAnnotation = "batch.kubernetes.io/job-completion-index"

// watcher keeps what the cluster says of a run: its Job, its pods (the
// last state seen of each, also once deleted), and the warning events of
// its objects. Each change is signalled on changed.
type watcher struct {
	spec    *Spec
	changed chan struct{}

	mu     sync.Mutex
	job    *batchv1.Job
	pods   map[string]*podSeen // by name
	events map[string]*corev1.Event
}

// podSeen is a pod as last seen, and whether it is gone.
type podSeen struct {
	pod  *corev1.Pod
	gone bool
}

func newWatcher(spec *Spec) *watcher {
	return &watcher{spec: spec, changed: make(chan struct{}, 1), pods: map[string]*podSeen{}, events: map[string]*corev1.Event{}}
}

func (w *watcher) poke() {
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

// start watches the run's objects until ctx ends; it returns once the
// first lists are in.
func (w *watcher) start(ctx context.Context, cs Cluster) error {
	ns, sel := w.spec.Namespace, LabelRun+"="+w.spec.Name
	pods := informer(cs, Pods, ns, sel, &corev1.Pod{}, func() runtime.Object { return &corev1.PodList{} })
	jobs := informer(cs, Jobs, ns, sel, &batchv1.Job{}, func() runtime.Object { return &batchv1.JobList{} })
	events := informer(cs, Events, ns, "", &corev1.Event{}, func() runtime.Object { return &corev1.EventList{} })
	// Each handler's registration says when it has been handed every
	// object of the first list: an informer's own HasSynced says only that
	// its store holds them, and the handlers get them from another
	// goroutine (a loaded machine once read the run's Job as gone before
	// its handler had seen it).
	podsReg, err := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { w.pod(o, false) },
		UpdateFunc: func(_, o any) { w.pod(o, false) },
		DeleteFunc: func(o any) { w.pod(o, true) },
	})
	if err != nil {
		return err
	}
	jobsReg, err := jobs.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { w.setJob(o, false) },
		UpdateFunc: func(_, o any) { w.setJob(o, false) },
		DeleteFunc: func(o any) { w.setJob(o, true) },
	})
	if err != nil {
		return err
	}
	eventsReg, err := events.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { w.event(o) },
		UpdateFunc: func(_, o any) { w.event(o) },
	})
	if err != nil {
		return err
	}
	for _, inf := range []cache.SharedIndexInformer{pods, jobs, events} {
		go inf.Run(ctx.Done())
	}
	if !cache.WaitForCacheSync(ctx.Done(), podsReg.HasSynced, jobsReg.HasSynced, eventsReg.HasSynced) {
		return fmt.Errorf("watching the run's pods, Job and events: %w", ctx.Err())
	}
	return nil
}

// informer is a shared informer of the objects of resource r in ns that
// the label selector sel selects (obj is one of them, newList makes their
// list).
func informer(cs Cluster, r schema.GroupVersionResource, ns, sel string, obj runtime.Object, newList func() runtime.Object) cache.SharedIndexInformer {
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.LabelSelector = sel
			list := newList()
			if err := cs.List(ctx, r, ns, o, list); err != nil {
				return nil, err
			}
			return list, nil
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = sel
			return cs.Watch(ctx, r, ns, o)
		},
	}
	return cache.NewSharedIndexInformer(lw, obj, 0, cache.Indexers{})
}

func (w *watcher) pod(o any, gone bool) {
	if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
		o = t.Obj
	}
	p, ok := o.(*corev1.Pod)
	if !ok || p.Labels[LabelRun] != w.spec.Name {
		return
	}
	w.mu.Lock()
	w.pods[p.Name] = &podSeen{pod: p, gone: gone}
	w.mu.Unlock()
	w.poke()
}

func (w *watcher) setJob(o any, gone bool) {
	if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
		o = t.Obj
	}
	j, ok := o.(*batchv1.Job)
	if !ok || j.Name != w.spec.Name {
		return
	}
	w.mu.Lock()
	if gone {
		w.job = nil
	} else {
		w.job = j
	}
	w.mu.Unlock()
	w.poke()
}

func (w *watcher) event(o any) {
	e, ok := o.(*corev1.Event)
	if !ok || e.Type != corev1.EventTypeWarning {
		return
	}
	n := e.InvolvedObject.Name
	if n != w.spec.Name && !strings.HasPrefix(n, w.spec.Name+"-") {
		return
	}
	w.mu.Lock()
	w.events[e.Namespace+"/"+e.Name] = e
	w.mu.Unlock()
	w.poke()
}

// view is a snapshot of the run as the cluster says it.
type view struct {
	job    *batchv1.Job
	shards []shardState
	// createFailed is the Job's last FailedCreate event: the pods cannot
	// be made (admission refused them, a quota, a bad spec).
	createFailed string
}

// snapshot returns the run as last seen.
func (w *watcher) snapshot() view {
	w.mu.Lock()
	defer w.mu.Unlock()
	v := view{job: w.job, shards: make([]shardState, w.spec.Shards)}
	for i := range v.shards {
		v.shards[i].index = i
	}
	// The newest pod of each index speaks for it.
	byIndex := map[int]*podSeen{}
	for _, s := range w.pods {
		i, err := strconv.Atoi(s.pod.Annotations[indexAnnotation])
		if err != nil || i < 0 || i >= w.spec.Shards {
			continue
		}
		if cur := byIndex[i]; cur == nil || s.pod.CreationTimestamp.After(cur.pod.CreationTimestamp.Time) {
			byIndex[i] = s
		}
	}
	warnings := map[string][]*corev1.Event{}
	var created time.Time
	for _, e := range w.events {
		if e.InvolvedObject.Kind == "Job" && e.Reason == "FailedCreate" && eventTime(e).After(created) {
			created, v.createFailed = eventTime(e), e.Message
		}
		if e.InvolvedObject.Kind == "Pod" {
			warnings[e.InvolvedObject.Name] = append(warnings[e.InvolvedObject.Name], e)
		}
	}
	for i, s := range byIndex {
		v.shards[i] = stateOf(i, s.pod, s.gone, warnings[s.pod.Name])
	}
	return v
}

func eventTime(e *corev1.Event) time.Time {
	for _, t := range []time.Time{e.LastTimestamp.Time, e.EventTime.Time, e.FirstTimestamp.Time, e.CreationTimestamp.Time} {
		if !t.IsZero() {
			return t
		}
	}
	return time.Time{}
}

// shardState is one shard as its pod says.
type shardState struct {
	index int
	pod   string // "" before the Job made one
	node  string
	// started: the container started (it ran, or runs); ended: it
	// terminated, or the pod is gone.
	started, running, ended bool
	// exit, reason and message are the container's termination.
	exit            int32
	reason, message string
	// waiting is why the container is not running yet, with its message.
	waiting, waitingMsg string
	// unschedulable is the scheduler's message when it cannot place the pod.
	unschedulable string
	// deleted: the pod is being (or was) deleted; disruption: the
	// DisruptionTarget condition (an eviction, a preemption, a drain);
	// podReason and podMessage: the pod's own status (Evicted, …).
	deleted, gone          bool
	disruption             string
	podReason, podMessage  string
	mountFailed, lastEvent string // the pod's warning events
}

func stateOf(i int, p *corev1.Pod, gone bool, events []*corev1.Event) shardState {
	st := shardState{index: i, pod: p.Name, node: p.Spec.NodeName, gone: gone, deleted: gone || p.DeletionTimestamp != nil,
		podReason: p.Status.Reason, podMessage: p.Status.Message}
	for _, c := range p.Status.Conditions {
		switch {
		case c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable:
			st.unschedulable = c.Message
		case c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue:
			st.disruption = strings.TrimSuffix(c.Reason+": "+c.Message, ": ")
		}
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name != container {
			continue
		}
		switch {
		case cs.State.Terminated != nil:
			t := cs.State.Terminated
			st.started, st.ended = true, true
			st.exit, st.reason, st.message = t.ExitCode, t.Reason, t.Message
		case cs.State.Running != nil:
			st.started, st.running = true, true
		case cs.State.Waiting != nil:
			st.waiting, st.waitingMsg = cs.State.Waiting.Reason, cs.State.Waiting.Message
		}
	}
	if p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded || gone {
		st.ended, st.running = true, false
	}
	sort.Slice(events, func(a, b int) bool { return eventTime(events[a]).Before(eventTime(events[b])) })
	for _, e := range events {
		st.lastEvent = e.Reason + ": " + e.Message
		if e.Reason == "FailedMount" || e.Reason == "FailedAttachVolume" {
			st.mountFailed = e.Message
		}
	}
	return st
}

// fatal says why a shard that has not started can never start, or "".
// It is what fails a run within seconds instead of at a timeout.
func (st shardState) fatal(s *Spec) string {
	switch st.waiting {
	case "ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull":
		return fmt.Sprintf("%s: %s (%s)", st.waiting, oneLine(st.waitingMsg), s.hint("describe pod", st.pod))
	case "CreateContainerConfigError", "CreateContainerError", "RunContainerError":
		return fmt.Sprintf("%s: %s (%s)", st.waiting, oneLine(st.waitingMsg), s.hint("describe pod", st.pod))
	}
	if st.unschedulable != "" {
		if strings.Contains(st.unschedulable, "unbound immediate PersistentVolumeClaims") || strings.Contains(st.unschedulable, "persistentvolumeclaim") {
			return fmt.Sprintf("its claim %s is not bound: the scheduler says %q (%s)", s.Claim, st.unschedulable, s.hint("describe pvc", s.Claim))
		}
		return fmt.Sprintf("unschedulable: the scheduler says %q (%s)", st.unschedulable, s.hint("describe pod", st.pod))
	}
	if st.ended && !st.started {
		return "the pod ended before its container started: " + st.podEnd()
	}
	return ""
}

// podEnd is how a pod ended, as its status says.
func (st shardState) podEnd() string {
	parts := []string{}
	if st.podReason != "" {
		parts = append(parts, st.podReason)
	}
	if st.podMessage != "" {
		parts = append(parts, st.podMessage)
	}
	if st.disruption != "" {
		parts = append(parts, st.disruption)
	}
	if st.gone || st.deleted {
		parts = append(parts, "pod deleted")
	}
	if len(parts) == 0 {
		return "no reason given"
	}
	return strings.Join(parts, ": ")
}

// waitingFor says what a shard that is not ready yet is doing.
func (st shardState) waitingFor() string {
	switch {
	case st.pod == "":
		return "no pod yet"
	case st.mountFailed != "":
		return "its volumes cannot be mounted: " + oneLine(st.mountFailed)
	case st.waiting != "":
		return strings.TrimSuffix(st.waiting+": "+oneLine(st.waitingMsg), ": ")
	case st.running:
		return "running, not at the barrier yet"
	case st.node == "":
		return "not scheduled yet"
	}
	return "starting"
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
