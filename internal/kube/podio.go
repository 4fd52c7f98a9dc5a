package kube

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// podIO is what hail kube reads from and sends to pods besides their
// objects: their logs, and HTTP requests to them through the API server's
// pod proxy (a shard's barrier and metrics, the volume helper's files).
// Tests give their own (client-go's fake API does neither).
type podIO interface {
	// Logs streams the log of pod's container (follow: until it ends).
	Logs(ctx context.Context, pod, container string, follow bool) (io.ReadCloser, error)
	// Proxy sends one HTTP request to pod's port through the API server
	// and returns the response's status and body (a body is streamed from
	// r when not nil).
	Proxy(ctx context.Context, method, pod string, port int, path string, query url.Values, header http.Header, body []byte) (int, io.ReadCloser, error)
}

// clusterIO is podIO over the Cluster, in one namespace.
type clusterIO struct {
	cs        Cluster
	namespace string
}

func (c clusterIO) Logs(ctx context.Context, pod, container string, follow bool) (io.ReadCloser, error) {
	return c.cs.Logs(ctx, c.namespace, pod, container, follow)
}

func (c clusterIO) Proxy(ctx context.Context, method, pod string, port int, path string, query url.Values, header http.Header, body []byte) (int, io.ReadCloser, error) {
	return c.cs.Proxy(ctx, c.namespace, method, pod, port, path, query, header, body)
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
