package testnet

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// Gate serves HTTP on 127.0.0.1 until the test ends: it answers none of its
// first n requests before all n have arrived (or 20 s have passed), then
// every request with body, so that a run against it needs n connections
// open at once, however fast the first ones could have served the rest.
// It returns the base URL ("http://127.0.0.1:PORT") and the count of the
// requests answered.
func Gate(t testing.TB, n int64, body string) (url string, served *atomic.Int64) {
	t.Helper()
	var arrived atomic.Int64
	served = new(atomic.Int64)
	all := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if arrived.Add(1) == n {
			close(all)
		}
		select {
		case <-all:
		case <-time.After(20 * time.Second):
		}
		served.Add(1)
		w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL, served
}
