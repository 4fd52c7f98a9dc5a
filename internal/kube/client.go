package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
)

// client is a Cluster over the API server: client-go's REST client, one
// per API group version (sharing one HTTP client and one rate limit),
// encoding and decoding with the scheme of scheme.go. It does what
// client-go's typed clients do for the calls hail kube makes, without
// their scheme of every group.
type client struct {
	groups map[schema.GroupVersion]groupClient
	params runtime.ParameterCodec
}

// groupClient is the REST client of one group version.
type groupClient struct {
	rest     *rest.RESTClient
	protobuf bool // objects travel as protobuf (group.protobuf)
}

// newClient returns a client of the cluster cfg names.
func newClient(cfg *rest.Config) (*client, error) {
	s, err := newScheme()
	if err != nil {
		return nil, err
	}
	cfg = rest.CopyConfig(cfg)
	cfg.NegotiatedSerializer = serializer.NewCodecFactory(s).WithoutConversion()
	if cfg.RateLimiter == nil && cfg.QPS > 0 {
		cfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(cfg.QPS, cfg.Burst)
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	c := &client{groups: map[schema.GroupVersion]groupClient{}, params: runtime.NewParameterCodec(s)}
	for _, g := range groups {
		gcfg := *cfg
		gcfg.GroupVersion = &g.gv
		gcfg.APIPath = "/apis"
		if g.gv.Group == "" {
			gcfg.APIPath = "/api"
		}
		rc, err := rest.RESTClientForConfigAndClient(&gcfg, hc)
		if err != nil {
			return nil, err
		}
		c.groups[g.gv] = groupClient{rc, g.protobuf}
	}
	return c, nil
}

// request starts a request on the objects of resource r in namespace ns.
// They travel as protobuf where their group has it (the server answers
// JSON if it has not), as client-go's typed clients do.
func (c *client) request(verb string, r schema.GroupVersionResource, ns string) *rest.Request {
	g, ok := c.groups[r.GroupVersion()]
	if !ok {
		// A programming error: every resource's group is registered.
		panic(fmt.Sprintf("kube: no client for %s (register its group in scheme.go)", r.GroupVersion()))
	}
	return g.rest.Verb(verb).UseProtobufAsDefaultIfPreferred(g.protobuf).NamespaceIfScoped(ns, ns != "").Resource(r.Resource)
}

func (c *client) Get(ctx context.Context, r schema.GroupVersionResource, ns, name string, obj runtime.Object) error {
	return c.request("GET", r, ns).Name(name).Do(ctx).Into(obj)
}

func (c *client) List(ctx context.Context, r schema.GroupVersionResource, ns string, opts metav1.ListOptions, list runtime.Object) error {
	return c.request("GET", r, ns).VersionedParams(&opts, c.params).Timeout(timeout(opts)).Do(ctx).Into(list)
}

func (c *client) Watch(ctx context.Context, r schema.GroupVersionResource, ns string, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	return c.request("GET", r, ns).VersionedParams(&opts, c.params).Timeout(timeout(opts)).Watch(ctx)
}

func timeout(opts metav1.ListOptions) time.Duration {
	if opts.TimeoutSeconds == nil {
		return 0
	}
	return time.Duration(*opts.TimeoutSeconds) * time.Second
}

func (c *client) Create(ctx context.Context, r schema.GroupVersionResource, ns string, obj runtime.Object) error {
	return c.request("POST", r, ns).Body(obj).Do(ctx).Into(obj)
}

func (c *client) Update(ctx context.Context, r schema.GroupVersionResource, ns string, obj runtime.Object) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	return c.request("PUT", r, ns).Name(m.GetName()).Body(obj).Do(ctx).Into(obj)
}

func (c *client) UpdateStatus(ctx context.Context, r schema.GroupVersionResource, ns string, obj runtime.Object) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	return c.request("PUT", r, ns).Name(m.GetName()).SubResource("status").Body(obj).Do(ctx).Into(obj)
}

func (c *client) MergePatch(ctx context.Context, r schema.GroupVersionResource, ns, name string, patch []byte, obj runtime.Object) error {
	return c.request("PATCH", r, ns).Name(name).SetHeader("Content-Type", string(types.MergePatchType)).Body(patch).Do(ctx).Into(obj)
}

func (c *client) Delete(ctx context.Context, r schema.GroupVersionResource, ns, name string, opts metav1.DeleteOptions) error {
	return c.request("DELETE", r, ns).Name(name).Body(&opts).Do(ctx).Error()
}

func (c *client) core() *rest.RESTClient { return c.groups[corev1.SchemeGroupVersion].rest }

func (c *client) Logs(ctx context.Context, ns, pod, container string, follow bool) (io.ReadCloser, error) {
	return c.core().Get().Namespace(ns).Resource("pods").Name(pod).SubResource("log").
		VersionedParams(&corev1.PodLogOptions{Container: container, Follow: follow}, c.params).Stream(ctx)
}

func (c *client) Proxy(ctx context.Context, ns, method, pod string, port int, path string, query url.Values, header http.Header, body []byte) (int, io.ReadCloser, error) {
	req := c.core().Verb(method).Namespace(ns).Resource("pods").SubResource("proxy").
		Name(pod + ":" + strconv.Itoa(port)).Suffix(path)
	for k, vs := range query {
		for _, v := range vs {
			req = req.Param(k, v)
		}
	}
	for k, vs := range header {
		req = req.SetHeader(k, vs...)
	}
	if body != nil {
		req = req.Body(body)
	}
	rc, err := req.Stream(ctx)
	if err == nil {
		return http.StatusOK, rc, nil
	}
	// Stream turns a status other than 2xx into an error: recover the
	// status and the body the pod answered with.
	var se apierrors.APIStatus
	if errors.As(err, &se) {
		st := se.Status()
		msg := st.Message
		if st.Details != nil {
			for _, c := range st.Details.Causes {
				if c.Type == "UnexpectedServerResponse" {
					msg = c.Message
				}
			}
		}
		return int(st.Code), io.NopCloser(bytes.NewReader([]byte(msg))), nil
	}
	return 0, nil, err
}
