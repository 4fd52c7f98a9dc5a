package kube

import (
	"context"
	"io"
	"net/http"
	"net/url"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// Cluster is the part of the Kubernetes API hail kube uses: objects of a
// few resources read, listed, watched, made, replaced and deleted, a pod's
// log, and HTTP requests to a pod through the API server's pod proxy.
//
// A resource is named by its group, version and plural name (Pods, Jobs,
// ...); ns is its namespace, "" for a cluster-scoped resource. Objects are
// the typed ones of k8s.io/api (a *corev1.Pod, a *batchv1.JobList): the
// real client (Connect) decodes only the groups it registers (see
// scheme.go); a resource of another group needs its types registered
// there, or a client of unstructured objects beside this one.
type Cluster interface {
	// Get reads the object name into obj.
	Get(ctx context.Context, r schema.GroupVersionResource, ns, name string, obj runtime.Object) error
	// List reads the objects opts selects into list (their list type).
	List(ctx context.Context, r schema.GroupVersionResource, ns string, opts metav1.ListOptions, list runtime.Object) error
	// Watch watches the objects opts selects.
	Watch(ctx context.Context, r schema.GroupVersionResource, ns string, opts metav1.ListOptions) (watch.Interface, error)
	// Create makes obj; obj becomes the object as stored.
	Create(ctx context.Context, r schema.GroupVersionResource, ns string, obj runtime.Object) error
	// Update replaces the object of obj's name by obj; obj becomes the
	// object as stored.
	Update(ctx context.Context, r schema.GroupVersionResource, ns string, obj runtime.Object) error
	// UpdateStatus replaces the status of the object of obj's name by
	// obj's (the status subresource); obj becomes the object as stored.
	UpdateStatus(ctx context.Context, r schema.GroupVersionResource, ns string, obj runtime.Object) error
	// MergePatch changes the object name by a JSON merge patch (RFC 7386)
	// and reads the result into obj.
	MergePatch(ctx context.Context, r schema.GroupVersionResource, ns, name string, patch []byte, obj runtime.Object) error
	// Delete deletes the object name.
	Delete(ctx context.Context, r schema.GroupVersionResource, ns, name string, opts metav1.DeleteOptions) error
	// Logs streams the log of pod's container (follow: until it ends).
	Logs(ctx context.Context, ns, pod, container string, follow bool) (io.ReadCloser, error)
	// Proxy sends one HTTP request to pod's port through the API server
	// and returns the response's status and body.
	Proxy(ctx context.Context, ns, method, pod string, port int, path string, query url.Values, header http.Header, body []byte) (int, io.ReadCloser, error)
}

// The resources hail kube uses.
var (
	// Pods are the shards' and the volume helpers' pods.
	Pods = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	// ConfigMaps hold a run's spec and files.
	ConfigMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	// Events tell why a pod cannot start.
	Events = schema.GroupVersionResource{Version: "v1", Resource: "events"}
	// Claims are PersistentVolumeClaims: the results volume.
	Claims = schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}
	// Jobs are the shards' Indexed Jobs.
	Jobs = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
	// StorageClasses say when a pending claim binds (cluster-scoped).
	StorageClasses = schema.GroupVersionResource{Group: "storage.k8s.io", Version: "v1", Resource: "storageclasses"}
	// Leases elect hail operator's leader.
	Leases = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}
)
