package kube

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// elector elects one leader among the operator's replicas with a Lease
// (coordination.k8s.io), as client-go's leaderelection does: the holder
// renews it every retry; another takes it once it has not been renewed
// for duration. Written here because client-go's leaderelection reaches
// the Lease through client-go's typed clients, which would link every API
// group into every hail run (see scheme.go); the update carries the
// Lease's resourceVersion, so two candidates cannot both take it.
type elector struct {
	cs              Cluster
	namespace, name string
	id              string // this replica's identity (its pod's name)
	duration        time.Duration
	retry           time.Duration
	now             func() time.Time
	logf            func(format string, args ...any) // says why it waits, once per reason
}

// acquire waits until this replica holds the Lease, or ctx ends. It says
// why it waits (another holds the Lease, the API server cannot be
// reached, RBAC refuses), each time the reason changes.
func (e *elector) acquire(ctx context.Context) error {
	last := ""
	for {
		ok, err := e.try(ctx)
		if ok {
			return nil
		}
		if why := oneLine(err.Error()); why != last && e.logf != nil {
			e.logf("not leading yet: %s", why)
			last = why
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(e.retry):
		}
	}
}

// hold renews the Lease every retry until ctx ends (then it lets it go,
// so a successor need not wait for it to expire) or until it could not
// be renewed for duration (another may hold it now): lost is closed then.
func (e *elector) hold(ctx context.Context, lost chan<- struct{}) {
	last := e.now()
	for {
		select {
		case <-ctx.Done():
			e.release()
			return
		case <-time.After(e.retry):
		}
		if ok, _ := e.try(ctx); ok {
			last = e.now()
			continue
		}
		if e.now().Sub(last) >= e.duration*2/3 {
			close(lost)
			return
		}
	}
}

// try takes or renews the Lease once; it reports whether this replica
// holds it.
func (e *elector) try(ctx context.Context) (bool, error) {
	now := metav1.NewMicroTime(e.now())
	var l coordinationv1.Lease
	err := e.cs.Get(ctx, Leases, e.namespace, e.name, &l)
	if apierrors.IsNotFound(err) {
		l = coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: e.name, Namespace: e.namespace},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &e.id, LeaseDurationSeconds: ptr.To(int32(e.duration.Seconds())),
				AcquireTime: &now, RenewTime: &now}}
		if err := e.cs.Create(ctx, Leases, e.namespace, &l); err != nil {
			return false, err
		}
		return true, nil
	} else if err != nil {
		return false, err
	}
	holder := ptr.Deref(l.Spec.HolderIdentity, "")
	if holder != e.id && holder != "" && !e.expired(&l) {
		return false, fmt.Errorf("the lease is held by %s", holder)
	}
	if holder != e.id {
		l.Spec.HolderIdentity = &e.id
		l.Spec.AcquireTime = &now
		l.Spec.LeaseTransitions = ptr.To(ptr.Deref(l.Spec.LeaseTransitions, 0) + 1)
	}
	l.Spec.RenewTime = &now
	l.Spec.LeaseDurationSeconds = ptr.To(int32(e.duration.Seconds()))
	if err := e.cs.Update(ctx, Leases, e.namespace, &l); err != nil {
		return false, err // a conflict: another took it first
	}
	return true, nil
}

// expired reports whether the holder has not renewed l for its duration.
func (e *elector) expired(l *coordinationv1.Lease) bool {
	if l.Spec.RenewTime == nil {
		return true
	}
	d := time.Duration(ptr.Deref(l.Spec.LeaseDurationSeconds, int32(e.duration.Seconds()))) * time.Second
	return e.now().After(l.Spec.RenewTime.Add(d))
}

// release gives the Lease up (its holder emptied), if this replica holds it.
func (e *elector) release() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var l coordinationv1.Lease
	if err := e.cs.Get(ctx, Leases, e.namespace, e.name, &l); err != nil || ptr.Deref(l.Spec.HolderIdentity, "") != e.id {
		return
	}
	l.Spec.HolderIdentity = ptr.To("")
	_ = e.cs.Update(ctx, Leases, e.namespace, &l)
}
