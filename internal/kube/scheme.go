package kube

import (
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The API groups hail kube and hail operator talk to, and only them. client-go's typed
// clients (k8s.io/client-go/kubernetes/...) import its scheme of every
// API group (some 57 packages of k8s.io/api): linked into hail, that
// doubled the binary and the memory and start of every hail run, kube or
// not. So hail kube has its own scheme of these groups, built only when it
// connects (TestOnlyRegisteredGroups keeps the others out of the binary).
//
// A client of another group (an operator's custom resource, say) adds its
// group here: its Go types' AddToScheme (hand-written types: a func that
// calls scheme.AddKnownTypes and metav1.AddToGroupVersion), protobuf off.
// Cluster then reads and writes its objects as typed ones; unstructured
// objects (*unstructured.Unstructured) of a group with a client need no
// types at all.
var groups = []group{
	{corev1.SchemeGroupVersion, corev1.AddToScheme, true},
	{batchv1.SchemeGroupVersion, batchv1.AddToScheme, true},
	{storagev1.SchemeGroupVersion, storagev1.AddToScheme, true},
	{coordinationv1.SchemeGroupVersion, coordinationv1.AddToScheme, true}, // hail operator's Lease
	{HailRunGroup, addHailRuns, false},
}

// group is one API group version hail kube talks to.
type group struct {
	gv schema.GroupVersion
	// add registers its types.
	add func(*runtime.Scheme) error
	// protobuf: its objects travel as protobuf, as client-go's typed
	// clients send built-in groups' (a custom resource's cannot: JSON).
	protobuf bool
}

// newScheme returns a scheme of the groups above, with meta/v1's options,
// status and watch events in each.
func newScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	for _, g := range groups {
		if err := g.add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}
