package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	k8stesting "k8s.io/client-go/testing"
)

// fakeScheme is hail kube's scheme (scheme.go: the groups it talks to,
// HailRuns among them), as a cluster with the CRD installed knows them.
var fakeScheme = func() *runtime.Scheme {
	s, err := newScheme()
	if err != nil {
		panic(err)
	}
	return s
}()

// fakeCluster is a Cluster over client-go's testing.Fake, the chain of
// reactors its fake clientset embeds: each call is the action client-go's
// fake typed clients invoke for it (so the tracker and any reactor answer
// as they would), lists filtered by label as they filter them. The fake
// has no pod logs or proxy: tests give their podIO.
//
// Not client-go's fake clientset itself: that links every API group's
// typed client into the test binary (48 MB, 5 s of CPU linking it at each
// test run, for calls this package never makes).
type fakeCluster struct{ *k8stesting.Fake }

// newFakeCluster is a simulated API server holding objs: reactors over an
// object tracker of fakeScheme, whose watches see the tracker's changes.
// onWatch, when not nil, learns of each watch that starts.
func newFakeCluster(onWatch func(schema.GroupVersionResource), objs ...runtime.Object) (fakeCluster, k8stesting.ObjectTracker) {
	tracker := k8stesting.NewObjectTracker(fakeScheme, serializer.NewCodecFactory(fakeScheme).UniversalDecoder())
	for _, o := range objs {
		if err := tracker.Add(o); err != nil {
			panic(err)
		}
	}
	f := fakeCluster{&k8stesting.Fake{}}
	f.AddReactor("*", "*", k8stesting.ObjectReaction(tracker))
	f.AddWatchReactor("*", func(a k8stesting.Action) (bool, watch.Interface, error) {
		var opts metav1.ListOptions
		if w, ok := a.(k8stesting.WatchActionImpl); ok {
			opts = w.ListOptions
		}
		w, err := tracker.Watch(a.GetResource(), a.GetNamespace(), opts)
		if err == nil && onWatch != nil {
			onWatch(a.GetResource())
		}
		return err == nil, w, err
	})
	return f, tracker
}

func (f fakeCluster) Get(_ context.Context, r schema.GroupVersionResource, ns, name string, obj runtime.Object) error {
	got, err := f.Invokes(k8stesting.NewGetActionWithOptions(r, ns, name, metav1.GetOptions{}), nil)
	if err != nil {
		return err
	}
	return copyInto(got, obj)
}

func (f fakeCluster) List(_ context.Context, r schema.GroupVersionResource, ns string, opts metav1.ListOptions, list runtime.Object) error {
	kinds, _, err := fakeScheme.ObjectKinds(list)
	if err != nil {
		return err
	}
	kind := kinds[0]
	kind.Kind = strings.TrimSuffix(kind.Kind, "List")
	got, err := f.Invokes(k8stesting.NewListActionWithOptions(r, kind, ns, opts), nil)
	if err != nil {
		return err
	}
	if err := copyInto(got, list); err != nil {
		return err
	}
	label, _, _ := k8stesting.ExtractFromListOptions(opts)
	if label == nil {
		return nil
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return err
	}
	var kept []runtime.Object
	for _, it := range items {
		if m, err := meta.Accessor(it); err == nil && label.Matches(labels.Set(m.GetLabels())) {
			kept = append(kept, it)
		}
	}
	return meta.SetList(list, kept)
}

func (f fakeCluster) Watch(_ context.Context, r schema.GroupVersionResource, ns string, opts metav1.ListOptions) (watch.Interface, error) {
	return f.InvokesWatch(k8stesting.NewWatchActionWithOptions(r, ns, opts))
}

func (f fakeCluster) Create(_ context.Context, r schema.GroupVersionResource, ns string, obj runtime.Object) error {
	got, err := f.Invokes(k8stesting.NewCreateActionWithOptions(r, ns, obj, metav1.CreateOptions{}), nil)
	if err != nil {
		return err
	}
	return copyInto(got, obj)
}

func (f fakeCluster) Update(_ context.Context, r schema.GroupVersionResource, ns string, obj runtime.Object) error {
	got, err := f.Invokes(k8stesting.NewUpdateActionWithOptions(r, ns, obj, metav1.UpdateOptions{}), nil)
	if err != nil {
		return err
	}
	return copyInto(got, obj)
}

func (f fakeCluster) UpdateStatus(_ context.Context, r schema.GroupVersionResource, ns string, obj runtime.Object) error {
	got, err := f.Invokes(k8stesting.NewUpdateSubresourceActionWithOptions(r, "status", ns, obj, metav1.UpdateOptions{}), nil)
	if err != nil {
		return err
	}
	return copyInto(got, obj)
}

func (f fakeCluster) MergePatch(_ context.Context, r schema.GroupVersionResource, ns, name string, patch []byte, obj runtime.Object) error {
	got, err := f.Invokes(k8stesting.NewPatchAction(r, ns, name, types.MergePatchType, patch), nil)
	if err != nil {
		return err
	}
	return copyInto(got, obj)
}

func (f fakeCluster) Delete(_ context.Context, r schema.GroupVersionResource, ns, name string, opts metav1.DeleteOptions) error {
	_, err := f.Invokes(k8stesting.NewDeleteActionWithOptions(r, ns, name, opts), nil)
	return err
}

var errNoPods = errors.New("the fake clientset runs no pods (give the Runner a podIO)")

func (f fakeCluster) Logs(context.Context, string, string, string, bool) (io.ReadCloser, error) {
	return nil, errNoPods
}

func (f fakeCluster) Proxy(context.Context, string, string, string, int, string, url.Values, http.Header, []byte) (int, io.ReadCloser, error) {
	return 0, nil, errNoPods
}

// copyInto sets *into to *got, of the same type.
func copyInto(got, into runtime.Object) error {
	g, i := reflect.ValueOf(got), reflect.ValueOf(into)
	if got == nil || g.Type() != i.Type() {
		return fmt.Errorf("the fake answered a %T for a %T", got, into)
	}
	i.Elem().Set(g.Elem())
	return nil
}

// get reads one object of type T as a typed client's Get does.
func get[T any, PT interface {
	*T
	runtime.Object
}](f fakeCluster, r schema.GroupVersionResource, ns, name string) (PT, error) {
	obj := PT(new(T))
	if err := f.Get(context.Background(), r, ns, name, obj); err != nil {
		return nil, err
	}
	return obj, nil
}
