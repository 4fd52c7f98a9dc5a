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

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// podIO is what hail kube reads from and sends to pods besides their
// objects: their logs, and HTTP requests to them through the API server's
// pod proxy (a shard's barrier and metrics, the volume helper's files).
// client-go's fake clientset does neither, so tests give their own.
type podIO interface {
	// Logs streams the log of pod's container (follow: until it ends).
	Logs(ctx context.Context, pod, container string, follow bool) (io.ReadCloser, error)
	// Proxy sends one HTTP request to pod's port through the API server
	// and returns the response's status and body (a body is streamed from
	// r when not nil).
	Proxy(ctx context.Context, method, pod string, port int, path string, query url.Values, header http.Header, body []byte) (int, io.ReadCloser, error)
}

// clusterIO is podIO over a real API server.
type clusterIO struct {
	cs        Cluster
	namespace string
}

func (c clusterIO) Logs(ctx context.Context, pod, container string, follow bool) (io.ReadCloser, error) {
	return c.cs.CoreV1().Pods(c.namespace).GetLogs(pod, &corev1.PodLogOptions{Container: container, Follow: follow}).Stream(ctx)
}

func (c clusterIO) Proxy(ctx context.Context, method, pod string, port int, path string, query url.Values, header http.Header, body []byte) (int, io.ReadCloser, error) {
	req := c.cs.CoreV1().RESTClient().Verb(method).Namespace(c.namespace).Resource("pods").SubResource("proxy").
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

// proxyBody sends one proxied request and returns the body of a 2xx
// answer, or an error that says what the pod answered.
func proxyBody(ctx context.Context, pio podIO, method, pod string, port int, path string, query url.Values, header http.Header, body []byte) ([]byte, error) {
	code, rc, err := pio.Proxy(ctx, method, pod, port, path, query, header, body)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, 64<<20))
	if err != nil {
		return nil, err
	}
	if code < 200 || code > 299 {
		return b, fmt.Errorf("%s %s: %d %s", method, path, code, bytes.TrimSpace(b))
	}
	return b, nil
}
