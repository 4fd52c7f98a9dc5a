package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// Operator runs HailRuns (hail operator): it watches them, and runs each
// new one as hail kube run does — validated first, an Indexed Job owned by
// the HailRun, the start barrier, every shard's end named, the results
// merged — writing its phase, its shards' states, the merged summary and
// verdict in its status. One replica leads (a Lease); the others wait to
// take over, and the new leader adopts the runs that are under way.
type Operator struct {
	// Client is the cluster's API.
	Client Cluster
	// Namespaces are the namespaces whose HailRuns it runs; none: all.
	Namespaces []string
	// Image is the shards' image when a HailRun names none.
	Image string
	// Validate checks a run's hail arguments with hail's own parsing (a
	// scenario's path is local, its files beside it) and returns the
	// run's length when known.
	Validate func(args []string) (time.Duration, error)
	// Identity names this replica in the Lease (its pod's name).
	Identity string
	// LeaseNamespace and LeaseName name the Lease of the leader.
	LeaseNamespace, LeaseName string
	// LeaseDuration is how long a leader that stopped renewing holds
	// the Lease (default 15s).
	LeaseDuration time.Duration
	// Log gets the operator's lines.
	Log io.Writer

	io        func(ns string) podIO // nil: through Client (tests: a simulated kubelet)
	tick      time.Duration         // runners' poll (tests)
	lead      time.Duration         // runners' least start lead (tests)
	leaseTick time.Duration         // the Lease's renewal (default LeaseDuration/3)

	logMu   sync.Mutex
	metrics *operatorMetrics
	queue   workqueue.TypedRateLimitingInterface[string]
	stores  []cache.Store

	mu   sync.Mutex
	runs map[string]*tracked // by namespace/name
	wg   sync.WaitGroup
}

// tracked is a HailRun this replica runs (or ran).
type tracked struct {
	uid        types.UID
	cancel     context.CancelFunc
	spec       *Spec         // once planned
	interrupts chan struct{} // a stop asked (StopAnnotation)
	stopped    bool
	done       bool
}

// stop asks the run to stop (once: the Runner takes one interrupt as a
// stop, a second as a deletion of the pods).
func (t *tracked) stop() {
	select {
	case t.interrupts <- struct{}{}:
	default:
	}
}

// StopAnnotation, set on a HailRun (to why), stops its run as hail kube
// stop does: the shards stop, each writes what it did, and that is merged
// (the run is then incomplete, so Failed, with its merged summary).
const StopAnnotation = "hail-loadgen.github.io/stop"

func (o *Operator) logf(format string, args ...any) {
	o.logMu.Lock()
	defer o.logMu.Unlock()
	fmt.Fprintf(o.Log, "hail operator: "+format+"\n", args...)
}

// ErrLostLease ends Run when another replica took the Lease.
var ErrLostLease = errors.New("lost the leader's Lease (another replica leads now): exiting so the Deployment restarts this one as a candidate")

// Run waits to lead, then runs HailRuns until ctx ends (then it lets the
// Lease go at once) or the Lease is lost. The runs under way go on in the
// cluster for the next leader to adopt.
func (o *Operator) Run(ctx context.Context) error {
	if o.LeaseDuration <= 0 {
		o.LeaseDuration = 15 * time.Second
	}
	if o.leaseTick <= 0 {
		o.leaseTick = o.LeaseDuration / 3
	}
	if o.Log == nil {
		o.Log = os.Stderr
	}
	o.init()
	e := &elector{cs: o.Client, namespace: o.LeaseNamespace, name: o.LeaseName, id: o.Identity, duration: o.LeaseDuration, retry: o.leaseTick, now: time.Now, logf: o.logf}
	o.logf("%s waits to lead (Lease %s/%s)", o.Identity, o.LeaseNamespace, o.LeaseName)
	if err := e.acquire(ctx); err != nil {
		return nil // ended before leading
	}
	o.logf("%s leads: running the HailRuns of %s", o.Identity, o.scope())
	o.metrics.leader.Set(1)
	defer o.metrics.leader.Set(0)

	hctx, release := context.WithCancel(context.WithoutCancel(ctx))
	lost := make(chan struct{})
	go e.hold(hctx, lost)
	defer release() // lets the Lease go once the runs here have stopped

	lctx, stop := context.WithCancel(ctx)
	defer stop()
	o.queue = workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	namespaces := o.Namespaces
	if len(namespaces) == 0 {
		namespaces = []string{""}
	}
	var synced []cache.InformerSynced
	var stores []cache.Store
	for _, ns := range namespaces {
		inf := informer(o.Client, HailRuns, ns, "", &HailRun{}, func() runtime.Object { return &HailRunList{} })
		enqueue := func(obj any) {
			if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
				o.queue.Add(key)
			}
		}
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: enqueue, UpdateFunc: func(_, n any) { enqueue(n) }, DeleteFunc: enqueue}); err != nil {
			return err
		}
		stores = append(stores, inf.GetStore())
		synced = append(synced, inf.HasSynced)
		go inf.Run(lctx.Done())
	}
	o.mu.Lock()
	o.stores = stores
	o.mu.Unlock()
	if !cache.WaitForCacheSync(lctx.Done(), synced...) {
		return nil
	}
	go func() {
		for o.work(lctx) {
		}
	}()
	var err error
	select {
	case <-ctx.Done():
		o.logf("stopping: the runs under way go on, for the next leader")
	case <-lost:
		err = ErrLostLease
	}
	stop()
	o.queue.ShutDown()
	o.wg.Wait()
	return err
}

func (o *Operator) scope() string {
	if len(o.Namespaces) == 0 {
		return "every namespace"
	}
	return fmt.Sprintf("namespaces %v", o.Namespaces)
}

// init makes the operator's run table and metrics, once.
func (o *Operator) init() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.runs == nil {
		o.runs = map[string]*tracked{}
	}
	if o.metrics == nil {
		o.metrics = newOperatorMetrics(o)
	}
}

// MetricsHandler serves the operator's metrics (Prometheus text format).
func (o *Operator) MetricsHandler() http.Handler {
	o.init()
	return promhttp.HandlerFor(o.metrics.reg, promhttp.HandlerOpts{})
}

// work reconciles one HailRun from the queue; false once it is shut down.
func (o *Operator) work(ctx context.Context) bool {
	key, quit := o.queue.Get()
	if quit {
		return false
	}
	defer o.queue.Done(key)
	if err := o.reconcile(ctx, key); err != nil {
		o.metrics.errors.Inc()
		o.logf("%s: %v (tried again)", key, err)
		o.queue.AddRateLimited(key)
		return true
	}
	o.queue.Forget(key)
	return true
}

// get is the HailRun key as last seen, or nil when it is gone.
func (o *Operator) get(key string) *HailRun {
	o.mu.Lock()
	stores := o.stores
	o.mu.Unlock()
	for _, s := range stores {
		if obj, ok, _ := s.GetByKey(key); ok {
			if hr, ok := obj.(*HailRun); ok {
				return hr
			}
		}
	}
	return nil
}

// reconcile brings one HailRun along: a new one is run; a deleted one's
// run is stopped; one under way that no replica runs (a new leader) is
// adopted.
func (o *Operator) reconcile(ctx context.Context, key string) error {
	hr := o.get(key)
	o.mu.Lock()
	t := o.runs[key]
	if t != nil && (hr == nil || hr.UID != t.uid || hr.DeletionTimestamp != nil) {
		delete(o.runs, key)
		o.mu.Unlock()
		if !t.done {
			o.logf("%s was deleted: stopping its run", key)
			t.cancel()
			if t.spec != nil {
				r := o.runner(t.spec.Namespace, t.spec.Name, "")
				r.cleanup(context.WithoutCancel(ctx), t.spec)
			}
		}
		if hr == nil || hr.DeletionTimestamp != nil {
			return nil
		}
		o.mu.Lock()
		t = nil
	}
	if t != nil && !t.done && !t.stopped && hr.Annotations[StopAnnotation] != "" {
		t.stopped = true
		o.logf("%s: stop asked (%s): its shards stop, and what they did is merged", key, hr.Annotations[StopAnnotation])
		t.stop()
	}
	if t != nil || hr == nil || hr.DeletionTimestamp != nil {
		o.mu.Unlock()
		return nil
	}
	phase := hr.Status.Phase
	if phase == PhaseSucceeded || phase == PhaseFailed {
		o.mu.Unlock()
		return nil
	}
	rctx, cancel := context.WithCancel(ctx)
	t = &tracked{uid: hr.UID, cancel: cancel, interrupts: make(chan struct{}, 1)}
	o.runs[key] = t
	o.wg.Add(1)
	o.mu.Unlock()
	adopt := phase == PhaseRunning || phase == PhaseMerging
	go func() {
		defer o.wg.Done()
		defer cancel()
		o.execute(rctx, hr.DeepCopyObject().(*HailRun), t, adopt)
		o.mu.Lock()
		t.done = true
		o.mu.Unlock()
	}()
	return nil
}

// runner is a Runner for one HailRun, its lines in the operator's log.
func (o *Operator) runner(ns, name, out string) *Runner {
	r := &Runner{Client: o.Client, Out: out, Stdout: io.Discard, Stderr: &prefixed{o: o, prefix: "hailrun " + ns + "/" + name + ": "},
		tick: o.tick, lead: o.lead}
	if o.io != nil {
		r.io = o.io(ns)
	}
	return r
}

// prefixed writes each line given to the operator's log, prefixed.
type prefixed struct {
	o      *Operator
	prefix string
}

func (p *prefixed) Write(b []byte) (int, error) {
	p.o.logMu.Lock()
	defer p.o.logMu.Unlock()
	fmt.Fprint(p.o.Log, p.prefix+string(b))
	return len(b), nil
}

// isGone reports an error that says the object is not there.
func isGone(err error) bool { return apierrors.IsNotFound(err) }
