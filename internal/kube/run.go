package kube

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Run starts the run s (its files' bytes by Key in data), holds its shards
// at the start barrier until every one is ready, follows it to its end and
// collects it. It returns the exit status (0 complete, 2 incomplete or a
// threshold failed, 3 no request succeeded) or an error: the run could not
// start — a shard's pod cannot start, a shard was not ready in time — and
// everything it made is deleted again.
func (r *Runner) Run(ctx context.Context, s *Spec, data map[string][]byte) (int, error) {
	if err := s.Check(); err != nil {
		return 1, err
	}
	r.bind(s)
	if err := r.checkFresh(ctx, s); err != nil {
		return 1, err
	}
	if err := r.checkClaim(ctx, s); err != nil {
		return 1, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := newWatcher(s)
	if err := w.start(ctx, r.Client); err != nil {
		return 1, err
	}
	r.say("run %s: %d shards of `hail %s` in namespace %s, results %s", s.Name, s.Shards, strings.Join(s.Args, " "), s.Namespace, s.resultsMode())
	fl := &followers{dir: func() (string, error) { return r.runDir(s) }, io: r.podIO(s.Namespace)}
	fail := func(err error) (int, error) {
		cancel()
		fl.waitFor(logGrace)
		r.cleanup(context.WithoutCancel(ctx), s)
		os.RemoveAll(filepath.Join(r.Out, s.Name)) // nothing was sent: nothing of value in it (checkFresh saw none)
		return 1, err
	}
	if err := r.create(ctx, s, data); err != nil {
		return fail(err)
	}
	at, err := r.barrier(ctx, s, w, fl)
	if err != nil {
		return fail(err)
	}
	r.say("every shard is ready: the run starts at %s", at.UTC().Format("15:04:05.000000Z"))
	detached, stopped := r.Detach, false
	if !detached {
		detached, stopped = r.follow(ctx, s, w, fl, at)
	}
	if detached {
		r.say("detached: run %s goes on; collect it with: hail kube collect %s -n %s (stop it with hail kube stop %s -n %s)", s.Name, s.Name, s.Namespace, s.Name, s.Namespace)
		return 0, nil
	}
	if err := ctx.Err(); err != nil {
		// Cancelled from outside (an operator that lost its lease): the
		// run goes on, as a detached one, for whoever collects it.
		return 1, err
	}
	// The followers end as the logs do, a moment after the containers:
	// the last lines of a deleted shard are its result.
	fl.waitFor(logGrace)
	cancel()
	r.report(PhaseMerging, s, w.snapshot())
	return r.collect(context.WithoutCancel(ctx), s, w.snapshot(), stopped)
}

func (s *Spec) resultsMode() string {
	if s.Claim != "" {
		return "on claim " + s.Claim
	}
	return "in the pods' logs"
}

// barrier waits until every shard is ready at its barrier and publishes
// their start. It fails at once when a shard cannot start (its pod says
// why), when a shard ends before the start, at ReadyTimeout, or on Ctrl-C
// (the shards are told to stop: nothing is sent).
func (r *Runner) barrier(ctx context.Context, s *Spec, w *watcher, fl *followers) (time.Time, error) {
	deadline := time.Now().Add(s.ReadyTimeout)
	ready := map[int]clockSample{}
	var mu sync.Mutex // guards ready while the shards are asked
	tick := time.NewTicker(r.every())
	defer tick.Stop()
	last := ""
	callOff := func(why string) {
		pods := map[int]string{}
		for _, st := range w.snapshot().shards {
			if st.running {
				pods[st.index] = st.pod
			}
		}
		r.stopShards(context.WithoutCancel(ctx), pods, why)
	}
	for {
		v := w.snapshot()
		r.report(PhaseWaiting, s, v)
		if v.createFailed != "" {
			callOff("a shard's pod cannot be created")
			return time.Time{}, fmt.Errorf("the Job cannot create the shards' pods: %s (%s)", v.createFailed, s.hint("describe job", s.Name))
		}
		pods := map[int]string{}
		for _, st := range v.shards {
			if why := st.fatal(s); why != "" {
				callOff(fmt.Sprintf("shard %d cannot start", st.index))
				return time.Time{}, fmt.Errorf("shard %d (pod %s) cannot start: %s", st.index, st.pod, why)
			}
			if st.ended {
				callOff(fmt.Sprintf("shard %d ended before the start", st.index))
				log, _ := os.ReadFile(filepath.Join(r.Out, s.Name, fmt.Sprintf("shard-%d.log", st.index)))
				return time.Time{}, fmt.Errorf("shard %d (pod %s) ended before the start: %s", st.index, st.pod, st.ending(s, log, false, false))
			}
			if st.running {
				fl.follow(ctx, st.index, st.pod)
				pods[st.index] = st.pod
			}
		}
		// Ask the shards that run and are not ready yet.
		var asked []int
		for i := range pods {
			if _, ok := ready[i]; !ok {
				asked = append(asked, i)
			}
		}
		// A shard that does not answer yet (hail still starting) is asked
		// again at the next tick.
		each(subset(pods, asked), func(i int, pod string) error {
			c, err := r.askReady(ctx, pod)
			if err == nil && c.state.Ready {
				mu.Lock()
				ready[i] = c
				mu.Unlock()
			}
			return err
		})
		if msg := fmt.Sprintf("%d of %d shards ready", len(ready), s.Shards); msg != last {
			last = msg
			if r.Terminal {
				r.progress(msg)
			}
		}
		if len(ready) == s.Shards {
			samples := make([]clockSample, 0, len(ready))
			for _, c := range ready {
				samples = append(samples, c)
			}
			lead := r.lead
			if lead <= 0 {
				lead = MinLead
			}
			at := startTime(time.Now(), samples, lead)
			if err := r.publish(ctx, pods, at); err != nil {
				callOff("the start could not be published")
				return time.Time{}, err
			}
			return at, nil
		}
		if time.Now().After(deadline) {
			var not []string
			for _, st := range v.shards {
				if _, ok := ready[st.index]; !ok {
					not = append(not, fmt.Sprintf("shard %d (%s)", st.index, st.waitingFor()))
				}
			}
			callOff("the shards were not all ready in time")
			return time.Time{}, fmt.Errorf("not every shard was ready after %s (--ready-timeout): %s; nothing was sent", s.ReadyTimeout, strings.Join(not, ", "))
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-r.Interrupts:
			callOff("interrupted")
			return time.Time{}, errInterrupted
		case <-w.changed:
		case <-tick.C:
		}
	}
}

// subset is pods restricted to the indices in keep.
func subset(pods map[int]string, keep []int) map[int]string {
	out := make(map[int]string, len(keep))
	for _, i := range keep {
		out[i] = pods[i]
	}
	return out
}

// follow shows the run's progress until every shard has ended: lines as
// shards end, and the live request rate (their metrics, read through the
// API server). Ctrl-C asks (with a terminal) whether to stop the run or
// detach from it; without one, or on a second Ctrl-C, it stops: the shards
// are told to stop (or their pods deleted when they cannot be told), and
// what they did is collected.
func (r *Runner) follow(ctx context.Context, s *Spec, w *watcher, fl *followers, at time.Time) (detached, stopped bool) {
	tick := time.NewTicker(max(r.every(), time.Second))
	defer tick.Stop()
	reported := map[int]bool{}
	sent := map[int]float64{} // each shard's requests, as last read (an ended shard keeps its last)
	var lastReq float64
	lastAt := time.Now()
	lastLine := time.Time{}
	var answers chan string
	for {
		v := w.snapshot()
		r.report(PhaseRunning, s, v)
		running, done := map[int]string{}, 0
		for _, st := range v.shards {
			switch {
			case st.ended || (st.pod != "" && st.gone):
				done++
				if !reported[st.index] {
					reported[st.index] = true
					if why := st.ending(s, nil, stopped, true); why != "" && st.exit != exitOK {
						r.say("shard %d ended: %s", st.index, why)
					}
				}
			case st.running:
				fl.follow(ctx, st.index, st.pod)
				running[st.index] = st.pod
			}
		}
		if done == s.Shards || jobFinished(v.job) {
			return false, stopped
		}
		select {
		case <-ctx.Done():
			return false, stopped
		case <-r.Interrupts:
			if stopped || r.Ask == nil || answers != nil {
				r.stop(ctx, s, running, stopped)
				stopped = true
				continue
			}
			answers = make(chan string, 1)
			go func() {
				a, err := r.Ask(fmt.Sprintf("\nhail kube: stop run %s (s: the shards stop, what they did is collected and merged) or detach (d: it goes on; hail kube collect %s later)? [s/d] ", s.Name, s.Name))
				if err != nil {
					a = "s"
				}
				answers <- a
			}()
		case a := <-answers:
			answers = nil
			if strings.HasPrefix(strings.ToLower(strings.TrimSpace(a)), "d") {
				return true, false
			}
			r.stop(ctx, s, running, false)
			stopped = true
		case <-w.changed:
		case <-tick.C:
			var mu sync.Mutex
			seen := 0
			each(running, func(i int, pod string) error {
				if n, ok := r.requestsOf(ctx, pod); ok {
					mu.Lock()
					sent[i] = n
					seen++
					mu.Unlock()
				}
				return nil
			})
			var total float64
			for _, n := range sent {
				total += n
			}
			now := time.Now()
			rate := 0.0
			if seen == len(running) && now.Sub(lastAt) > 0 && total >= lastReq {
				rate = (total - lastReq) / now.Sub(lastAt).Seconds()
			}
			lastReq, lastAt = total, now
			line := fmt.Sprintf("%d running, %d of %d ended · %.0f requests/s · %.0f requests · %s since the start",
				len(running), done, s.Shards, rate, total, now.Sub(at).Round(time.Second))
			if answers == nil && (r.Terminal || now.Sub(lastLine) >= ProgressEvery) { // not over the question
				r.progress(line)
				lastLine = now
			}
		}
	}
}

// logGrace bounds the wait for the shards' log streams to end once their
// containers have.
const logGrace = 15 * time.Second

// ProgressEvery is how often the progress line is printed when Stderr is
// not a terminal.
const ProgressEvery = 10 * time.Second

// jobFinished reports whether the Job has ended (every index done, its
// deadline passed, or it was deleted while we watched).
func jobFinished(j *batchv1.Job) bool {
	if j == nil {
		return false
	}
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// stop stops the running shards: each is told to stop (it stops as on
// SIGTERM and writes what it did); a shard that cannot be told, or every
// shard when again is set (a second Ctrl-C), has its pod deleted (the
// kubelet sends SIGTERM).
func (r *Runner) stop(ctx context.Context, s *Spec, running map[int]string, again bool) {
	ctx = context.WithoutCancel(ctx)
	if again {
		r.say("stopping: deleting the shards' pods")
		for _, pod := range running {
			_ = r.Client.Delete(ctx, Pods, s.Namespace, pod, metav1.DeleteOptions{})
		}
		return
	}
	r.say("stopping: the shards stop and write what they did")
	for i, err := range r.stopShards(ctx, running, "the user stopped the run") {
		r.say("shard %d could not be told to stop (%v): deleting its pod", i, err)
		_ = r.Client.Delete(ctx, Pods, s.Namespace, running[i], metav1.DeleteOptions{})
	}
}

// Stop stops a detached run: every shard still running is told to stop
// (before the start: the run is called off) and writes what it did; the
// pods stay, so hail kube collect merges them.
func (r *Runner) Stop(ctx context.Context, s *Spec) error {
	r.bind(s)
	w := newWatcher(s)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := w.start(ctx, r.Client); err != nil {
		return err
	}
	running := map[int]string{}
	for _, st := range w.snapshot().shards {
		if st.running {
			running[st.index] = st.pod
		}
	}
	if len(running) == 0 {
		r.say("run %s: no shard is running", s.Name)
		return nil
	}
	s.Stopped = time.Now().UTC()
	if err := r.saveSpec(ctx, s); err != nil {
		r.say("could not record the stop in the run's ConfigMap: %v", err)
	}
	r.stop(ctx, s, running, false)
	end := time.Now().Add(time.Minute)
	for {
		left := 0
		for _, st := range w.snapshot().shards {
			if st.running {
				left++
			}
		}
		if left == 0 {
			r.say("run %s stopped; merge what it did with: hail kube collect %s -n %s", s.Name, s.Name, s.Namespace)
			return nil
		}
		if time.Now().After(end) {
			return fmt.Errorf("%d shard(s) still running a minute after being told to stop: %s", left, s.hint("get pods -l", LabelRun+"="+s.Name))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-w.changed:
		case <-time.After(r.every()):
		}
	}
}

// Collect waits for a run (a detached one, or one that ended) to end, and
// collects and merges it. Ctrl-C while it waits leaves it running.
func (r *Runner) Collect(ctx context.Context, s *Spec) (int, error) {
	r.bind(s)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := newWatcher(s)
	if err := w.start(ctx, r.Client); err != nil {
		return 1, err
	}
	v := w.snapshot()
	if v.job == nil {
		return 1, fmt.Errorf("run %s: its Job is gone (deleted, or removed %s after it finished): its pods and logs went with it", s.Name, s.KeepFor)
	}
	fl := &followers{dir: func() (string, error) { return r.runDir(s) }, io: r.podIO(s.Namespace)}
	for {
		v = w.snapshot()
		r.report(PhaseRunning, s, v)
		left := 0
		for _, st := range v.shards {
			if !st.ended && !(st.pod != "" && st.gone) {
				left++
				if st.running {
					fl.follow(ctx, st.index, st.pod)
				}
			}
		}
		if left == 0 || jobFinished(v.job) {
			break
		}
		if r.Terminal {
			r.progress(fmt.Sprintf("run %s: %d of %d shards still running", s.Name, left, s.Shards))
		}
		select {
		case <-ctx.Done():
			return 1, ctx.Err()
		case <-r.Interrupts:
			r.say("left running: hail kube collect %s -n %s later", s.Name, s.Namespace)
			return 130, nil
		case <-w.changed:
		case <-time.After(time.Second):
		}
	}
	fl.waitFor(logGrace)
	cancel()
	r.report(PhaseMerging, s, w.snapshot())
	return r.collect(context.WithoutCancel(ctx), s, w.snapshot(), !s.Stopped.IsZero())
}

var errNothing = errors.New("every shard failed: nothing to merge")
