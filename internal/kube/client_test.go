package kube

import (
	"context"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
)

// apiStandIn is a small API server on loopback: it records every request
// (decoding a body with the scheme, protobuf or JSON) and answers with
// answer, set per check.
type apiStandIn struct {
	t      *testing.T
	codecs serializer.CodecFactory

	mu     sync.Mutex
	last   *http.Request
	body   runtime.Object // the request's object, decoded
	answer func(w http.ResponseWriter, r *http.Request)
}

func (a *apiStandIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer t0k" {
		http.Error(w, "no token", http.StatusUnauthorized)
		return
	}
	b, _ := io.ReadAll(r.Body)
	var obj runtime.Object
	if ct := r.Header.Get("Content-Type"); len(b) > 0 && (ct == runtime.ContentTypeProtobuf || ct == runtime.ContentTypeJSON) {
		var err error
		if obj, _, err = a.codecs.UniversalDeserializer().Decode(b, nil, nil); err != nil {
			a.t.Errorf("%s %s: the body does not decode (%s): %v", r.Method, r.URL, r.Header.Get("Content-Type"), err)
		}
	}
	a.mu.Lock()
	a.last, a.body = r, obj
	answer := a.answer
	a.mu.Unlock()
	answer(w, r)
}

// seen returns the last request and its object.
func (a *apiStandIn) seen() (*http.Request, runtime.Object) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.last, a.body
}

func (a *apiStandIn) set(answer func(w http.ResponseWriter, r *http.Request)) {
	a.mu.Lock()
	a.answer = answer
	a.mu.Unlock()
}

// reply answers obj as JSON (the server's other encoding) with code.
func (a *apiStandIn) reply(code int, obj runtime.Object) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		b, err := runtime.Encode(a.codecs.LegacyCodec(corev1.SchemeGroupVersion, batchv1.SchemeGroupVersion, storagev1.SchemeGroupVersion), obj)
		if err != nil {
			a.t.Error(err)
		}
		w.Header().Set("Content-Type", runtime.ContentTypeJSON)
		w.WriteHeader(code)
		w.Write(b)
	}
}

// connectStandIn connects to a stand-in API server through a kubeconfig
// (its CA, a token, the context's namespace "load"), as hail kube
// connects. (client-go sends credentials over TLS only.)
func connectStandIn(t *testing.T) (Cluster, *apiStandIn) {
	t.Helper()
	s, err := newScheme()
	if err != nil {
		t.Fatal(err)
	}
	a := &apiStandIn{t: t, codecs: serializer.NewCodecFactory(s)}
	srv := httptest.NewTLSServer(a)
	t.Cleanup(srv.Close)
	ca := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	cfg := filepath.Join(t.TempDir(), "kubeconfig")
	os.WriteFile(cfg, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "`+srv.URL+`", certificate-authority-data: `+ca+`}}]
users: [{name: u, user: {token: t0k}}]
contexts: [{name: x, context: {cluster: c, user: u, namespace: load}}]
current-context: x
`), 0o600)
	cs, ns, err := Connect(cfg, "", "", "hail/test")
	if err != nil || ns != "load" {
		t.Fatalf("Connect: %v, namespace %q", err, ns)
	}
	return cs, a
}

func status(code int, reason metav1.StatusReason) *metav1.Status {
	return &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure, Code: int32(code), Reason: reason, Message: string(reason)}
}

// Every call of the client is the request client-go's typed clients make
// (method, path, query, protobuf bodies for built-in groups), and it
// reads the answers: objects, lists, a 404 as NotFound, a watch's events.
func TestClientRequests(t *testing.T) {
	t.Parallel()
	cs, api := connectStandIn(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		answer func(a *apiStandIn) func(http.ResponseWriter, *http.Request)
		call   func() (any, error)
		want   string // METHOD path?query
		check  func(got any, body runtime.Object, r *http.Request) string
	}{
		{
			name: "get",
			answer: func(a *apiStandIn) func(http.ResponseWriter, *http.Request) {
				return a.reply(200, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p1"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}})
			},
			call: func() (any, error) {
				var p corev1.Pod
				return &p, cs.Get(ctx, Pods, "load", "p1", &p)
			},
			want: "GET /api/v1/namespaces/load/pods/p1",
			check: func(got any, _ runtime.Object, r *http.Request) string {
				if p := got.(*corev1.Pod); p.Name != "p1" || p.Status.Phase != corev1.PodRunning {
					return fmt.Sprintf("pod %+v", p)
				}
				if !strings.HasPrefix(r.Header.Get("Accept"), runtime.ContentTypeProtobuf) {
					return "Accept " + r.Header.Get("Accept")
				}
				return ""
			},
		},
		{
			name: "not found",
			answer: func(a *apiStandIn) func(http.ResponseWriter, *http.Request) {
				return a.reply(404, status(404, metav1.StatusReasonNotFound))
			},
			call: func() (any, error) { return nil, cs.Get(ctx, Claims, "load", "gone", &corev1.PersistentVolumeClaim{}) },
			want: "GET /api/v1/namespaces/load/persistentvolumeclaims/gone",
		},
		{
			name: "cluster-scoped",
			answer: func(a *apiStandIn) func(http.ResponseWriter, *http.Request) {
				return a.reply(200, &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "local"}, Provisioner: "x"})
			},
			call: func() (any, error) {
				var sc storagev1.StorageClass
				return &sc, cs.Get(ctx, StorageClasses, "", "local", &sc)
			},
			want: "GET /apis/storage.k8s.io/v1/storageclasses/local",
			check: func(got any, _ runtime.Object, _ *http.Request) string {
				if sc := got.(*storagev1.StorageClass); sc.Provisioner != "x" {
					return fmt.Sprintf("class %+v", sc)
				}
				return ""
			},
		},
		{
			name: "list",
			answer: func(a *apiStandIn) func(http.ResponseWriter, *http.Request) {
				return a.reply(200, &batchv1.JobList{ListMeta: metav1.ListMeta{ResourceVersion: "7"}, Items: []batchv1.Job{{ObjectMeta: metav1.ObjectMeta{Name: "r1"}}}})
			},
			call: func() (any, error) {
				var l batchv1.JobList
				return &l, cs.List(ctx, Jobs, "load", metav1.ListOptions{LabelSelector: LabelRun + "=r1"}, &l)
			},
			want: "GET /apis/batch/v1/namespaces/load/jobs?labelSelector=" + url.QueryEscape(LabelRun+"=r1"),
			check: func(got any, _ runtime.Object, _ *http.Request) string {
				if l := got.(*batchv1.JobList); len(l.Items) != 1 || l.Items[0].Name != "r1" || l.ResourceVersion != "7" {
					return fmt.Sprintf("list %+v", l)
				}
				return ""
			},
		},
		{
			name: "create",
			answer: func(a *apiStandIn) func(http.ResponseWriter, *http.Request) {
				return a.reply(201, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "r1", UID: "u-1"}, Data: map[string]string{"k": "v"}})
			},
			call: func() (any, error) {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "r1"}, Data: map[string]string{"k": "v"}}
				return cm, cs.Create(ctx, ConfigMaps, "load", cm)
			},
			want: "POST /api/v1/namespaces/load/configmaps",
			check: func(got any, body runtime.Object, r *http.Request) string {
				if cm, ok := body.(*corev1.ConfigMap); !ok || cm.Name != "r1" || cm.Data["k"] != "v" {
					return fmt.Sprintf("sent %#v", body)
				}
				if ct := r.Header.Get("Content-Type"); ct != runtime.ContentTypeProtobuf {
					return "sent as " + ct
				}
				if cm := got.(*corev1.ConfigMap); cm.UID != "u-1" {
					return "the stored object was not read back"
				}
				return ""
			},
		},
		{
			name: "update",
			answer: func(a *apiStandIn) func(http.ResponseWriter, *http.Request) {
				return a.reply(200, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "r1", ResourceVersion: "9"}})
			},
			call: func() (any, error) {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "r1", ResourceVersion: "8"}}
				return cm, cs.Update(ctx, ConfigMaps, "load", cm)
			},
			want: "PUT /api/v1/namespaces/load/configmaps/r1",
			check: func(got any, body runtime.Object, _ *http.Request) string {
				if cm, ok := body.(*corev1.ConfigMap); !ok || cm.ResourceVersion != "8" {
					return fmt.Sprintf("sent %#v", body)
				}
				if got.(*corev1.ConfigMap).ResourceVersion != "9" {
					return "the stored object was not read back"
				}
				return ""
			},
		},
		{
			name: "delete",
			answer: func(a *apiStandIn) func(http.ResponseWriter, *http.Request) {
				return a.reply(200, &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusSuccess})
			},
			call: func() (any, error) {
				bg := metav1.DeletePropagationBackground
				return nil, cs.Delete(ctx, Jobs, "load", "r1", metav1.DeleteOptions{PropagationPolicy: &bg})
			},
			want: "DELETE /apis/batch/v1/namespaces/load/jobs/r1",
			check: func(_ any, body runtime.Object, _ *http.Request) string {
				if o, ok := body.(*metav1.DeleteOptions); !ok || o.PropagationPolicy == nil || *o.PropagationPolicy != metav1.DeletePropagationBackground {
					return fmt.Sprintf("sent %#v", body)
				}
				return ""
			},
		},
	} {
		api.set(tc.answer(api))
		got, err := tc.call()
		r, body := api.seen()
		if line := r.Method + " " + r.URL.RequestURI(); line != tc.want {
			t.Errorf("%s: sent %s, want %s", tc.name, line, tc.want)
		}
		if tc.name == "not found" {
			if !apierrors.IsNotFound(err) {
				t.Errorf("%s: %v, want NotFound", tc.name, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if why := tc.check(got, body, r); why != "" {
			t.Errorf("%s: %s", tc.name, why)
		}
	}
}

// A watch is a streamed request (watch=true, the options' timeout) whose
// events arrive decoded, in order, until the server ends it.
func TestClientWatch(t *testing.T) {
	t.Parallel()
	cs, api := connectStandIn(t)
	api.set(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", runtime.ContentTypeJSON)
		for i, reason := range []string{"FailedScheduling", "BackOff"} {
			fmt.Fprintf(w, `{"type":"ADDED","object":{"kind":"Event","apiVersion":"v1","metadata":{"name":"e%d","resourceVersion":"%d"},"reason":%q}}`+"\n", i, i+1, reason)
			w.(http.Flusher).Flush()
		}
	})
	timeout := int64(30)
	wi, err := cs.Watch(context.Background(), Events, "load", metav1.ListOptions{ResourceVersion: "5", TimeoutSeconds: &timeout})
	if err != nil {
		t.Fatal(err)
	}
	defer wi.Stop()
	var reasons []string
	for ev := range wi.ResultChan() {
		e, ok := ev.Object.(*corev1.Event)
		if ev.Type != watch.Added || !ok {
			t.Fatalf("event %v %T", ev.Type, ev.Object)
		}
		reasons = append(reasons, e.Reason)
	}
	if strings.Join(reasons, ",") != "FailedScheduling,BackOff" {
		t.Errorf("events %v", reasons)
	}
	r, _ := api.seen()
	q := r.URL.Query()
	if r.URL.Path != "/api/v1/namespaces/load/events" || q.Get("watch") != "true" || q.Get("resourceVersion") != "5" || q.Get("timeoutSeconds") != "30" {
		t.Errorf("sent %s", r.URL)
	}
}

// A pod's log is streamed (follow) from its log subresource; the pod
// proxy carries the method, path, query, headers and body to the pod and
// returns what the pod answered, a status other than 2xx included.
func TestClientLogsAndProxy(t *testing.T) {
	t.Parallel()
	cs, api := connectStandIn(t)
	api.set(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "line 1\nline 2\n")
	})
	rc, err := cs.Logs(context.Background(), "load", "p1", "hail", true)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(rc)
	rc.Close()
	r, _ := api.seen()
	if string(b) != "line 1\nline 2\n" || r.URL.Path != "/api/v1/namespaces/load/pods/p1/log" || r.URL.Query().Get("container") != "hail" || r.URL.Query().Get("follow") != "true" {
		t.Errorf("logs %q from %s", b, r.URL)
	}

	for _, tc := range []struct {
		code int
		body string
	}{{200, `{"ready":true}`}, {409, "the start is already set"}, {403, "no or wrong barrier token"}} {
		api.set(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(tc.code)
			io.WriteString(w, tc.body)
		})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		code, rc, err := cs.Proxy(ctx, "load", "POST", "p1", 9090, "/start", url.Values{"at": {"12"}}, http.Header{"X-Hail-Barrier-Token": {"k"}}, []byte("x"))
		if err != nil {
			t.Fatalf("%d: %v", tc.code, err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		cancel()
		r, _ := api.seen()
		if code != tc.code || string(b) != tc.body {
			t.Errorf("proxy: %d %q, want %d %q", code, b, tc.code, tc.body)
		}
		if r.Method != "POST" || r.URL.Path != "/api/v1/namespaces/load/pods/p1:9090/proxy/start" || r.URL.Query().Get("at") != "12" || r.Header.Get("X-Hail-Barrier-Token") != "k" {
			t.Errorf("proxied %s %s %v", r.Method, r.URL, r.Header)
		}
	}
}

// The operator's calls: a HailRun (the custom group) travels as JSON,
// read, listed, and its status written through the status subresource;
// a Lease as protobuf.
func TestClientHailRunsAndLeases(t *testing.T) {
	t.Parallel()
	cs, api := connectStandIn(t)
	ctx := context.Background()
	answer := func(code int, obj runtime.Object) func(http.ResponseWriter, *http.Request) {
		return func(w http.ResponseWriter, _ *http.Request) {
			b, err := runtime.Encode(api.codecs.LegacyCodec(HailRunGroup, coordinationv1.SchemeGroupVersion), obj)
			if err != nil {
				t.Error(err)
			}
			w.Header().Set("Content-Type", runtime.ContentTypeJSON)
			w.WriteHeader(code)
			w.Write(b)
		}
	}
	hr := &HailRun{ObjectMeta: metav1.ObjectMeta{Name: "r1", Namespace: "load", UID: "u1"}, Spec: HailRunSpec{Shards: 3, Args: []string{"-z", "1s", "http://x/"}}}

	api.set(answer(200, hr))
	var got HailRun
	if err := cs.Get(ctx, HailRuns, "load", "r1", &got); err != nil || got.Spec.Shards != 3 || got.Spec.Args[2] != "http://x/" {
		t.Fatalf("get: %v %+v", err, got)
	}
	r, _ := api.seen()
	if r.URL.Path != "/apis/hail-loadgen.github.io/v1alpha1/namespaces/load/hailruns/r1" || strings.Contains(r.Header.Get("Accept"), "protobuf") {
		t.Errorf("get: %s %s, Accept %s", r.Method, r.URL, r.Header.Get("Accept"))
	}

	api.set(answer(200, &HailRunList{Items: []HailRun{*hr}}))
	var list HailRunList
	if err := cs.List(ctx, HailRuns, "", metav1.ListOptions{}, &list); err != nil || len(list.Items) != 1 || list.Items[0].Name != "r1" {
		t.Fatalf("list: %v %+v", err, list)
	}
	if r, _ := api.seen(); r.URL.Path != "/apis/hail-loadgen.github.io/v1alpha1/hailruns" {
		t.Errorf("list of every namespace: %s", r.URL)
	}

	up := hr.DeepCopyObject().(*HailRun)
	up.Status = HailRunStatus{Phase: PhaseSucceeded, Summary: &RunSummary{Requests: 303, P99: "1ms"}}
	api.set(answer(200, up))
	if err := cs.UpdateStatus(ctx, HailRuns, "load", up.DeepCopyObject()); err != nil {
		t.Fatal(err)
	}
	r, body := api.seen()
	sent, ok := body.(*HailRun)
	if r.Method != "PUT" || r.URL.Path != "/apis/hail-loadgen.github.io/v1alpha1/namespaces/load/hailruns/r1/status" ||
		r.Header.Get("Content-Type") != runtime.ContentTypeJSON || !ok || sent.Status.Summary.Requests != 303 {
		t.Errorf("status: %s %s (%s) %+v", r.Method, r.URL, r.Header.Get("Content-Type"), body)
	}

	api.set(answer(200, hr))
	if err := cs.MergePatch(ctx, HailRuns, "load", "r1", []byte(`{"metadata":{"annotations":{"a":"b"}}}`), &HailRun{}); err != nil {
		t.Fatal(err)
	}
	if r, _ := api.seen(); r.Method != "PATCH" || r.URL.Path != "/apis/hail-loadgen.github.io/v1alpha1/namespaces/load/hailruns/r1" || r.Header.Get("Content-Type") != "application/merge-patch+json" {
		t.Errorf("merge patch: %s %s (%s)", r.Method, r.URL, r.Header.Get("Content-Type"))
	}

	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "hail-operator"}, Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("op-a")}}
	api.set(answer(201, l))
	if err := cs.Create(ctx, Leases, "hail-system", l.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	r, body = api.seen()
	if sent, ok := body.(*coordinationv1.Lease); r.URL.Path != "/apis/coordination.k8s.io/v1/namespaces/hail-system/leases" ||
		r.Header.Get("Content-Type") != runtime.ContentTypeProtobuf || !ok || *sent.Spec.HolderIdentity != "op-a" {
		t.Errorf("lease: %s %s (%s) %+v", r.Method, r.URL, r.Header.Get("Content-Type"), body)
	}
}
