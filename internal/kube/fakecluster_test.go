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
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
	k8stesting "k8s.io/client-go/testing"
)

// fakeCluster is a Cluster over client-go's fake clientset: each call is
// the action client-go's fake typed clients invoke for it (so the tracker
// and any reactor answer as they would), lists filtered by label as they
// filter them. The fake has no pod logs or proxy: tests give their podIO.
type fakeCluster struct{ cs *fake.Clientset }

func (f fakeCluster) Get(_ context.Context, r schema.GroupVersionResource, ns, name string, obj runtime.Object) error {
	got, err := f.cs.Invokes(k8stesting.NewGetActionWithOptions(r, ns, name, metav1.GetOptions{}), nil)
	if err != nil {
		return err
	}
	return copyInto(got, obj)
}

func (f fakeCluster) List(_ context.Context, r schema.GroupVersionResource, ns string, opts metav1.ListOptions, list runtime.Object) error {
	kinds, _, err := scheme.Scheme.ObjectKinds(list)
	if err != nil {
		return err
	}
	kind := kinds[0]
	kind.Kind = strings.TrimSuffix(kind.Kind, "List")
	got, err := f.cs.Invokes(k8stesting.NewListActionWithOptions(r, kind, ns, opts), nil)
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
	return f.cs.InvokesWatch(k8stesting.NewWatchActionWithOptions(r, ns, opts))
}

func (f fakeCluster) Create(_ context.Context, r schema.GroupVersionResource, ns string, obj runtime.Object) error {
	got, err := f.cs.Invokes(k8stesting.NewCreateActionWithOptions(r, ns, obj, metav1.CreateOptions{}), nil)
	if err != nil {
		return err
	}
	return copyInto(got, obj)
}

func (f fakeCluster) Update(_ context.Context, r schema.GroupVersionResource, ns string, obj runtime.Object) error {
	got, err := f.cs.Invokes(k8stesting.NewUpdateActionWithOptions(r, ns, obj, metav1.UpdateOptions{}), nil)
	if err != nil {
		return err
	}
	return copyInto(got, obj)
}

func (f fakeCluster) UpdateStatus(_ context.Context, r schema.GroupVersionResource, ns string, obj runtime.Object) error {
	got, err := f.cs.Invokes(k8stesting.NewUpdateSubresourceActionWithOptions(r, "status", ns, obj, metav1.UpdateOptions{}), nil)
	if err != nil {
		return err
	}
	return copyInto(got, obj)
}

func (f fakeCluster) MergePatch(_ context.Context, r schema.GroupVersionResource, ns, name string, patch []byte, obj runtime.Object) error {
	got, err := f.cs.Invokes(k8stesting.NewPatchAction(r, ns, name, types.MergePatchType, patch), nil)
	if err != nil {
		return err
	}
	return copyInto(got, obj)
}

func (f fakeCluster) Delete(_ context.Context, r schema.GroupVersionResource, ns, name string, opts metav1.DeleteOptions) error {
	_, err := f.cs.Invokes(k8stesting.NewDeleteActionWithOptions(r, ns, name, opts), nil)
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
