package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// No credential crosses to another origin in a redirect, as with curl and
// Go's net/http: Authorization (from -H, -a or the URL's user info),
// Cookie and Proxy-Authorization reach the first origin and its own hops,
// never the other one. On every HTTP/1 engine.
func TestSecretsDoNotCrossOrigins(t *testing.T) {
	t.Parallel()
	type seen struct {
		mu      sync.Mutex
		headers []http.Header
	}
	take := func(s *seen) []http.Header { // the requests so far, and none kept
		s.mu.Lock()
		defer s.mu.Unlock()
		h := s.headers
		s.headers = nil
		return h
	}
	record := func(s *seen) func(http.ResponseWriter, *http.Request) {
		return func(w http.ResponseWriter, r *http.Request) {
			s.mu.Lock()
			s.headers = append(s.headers, r.Header.Clone())
			s.mu.Unlock()
		}
	}
	var here, there seen
	other := httptest.NewServer(http.HandlerFunc(record(&there)))
	defer other.Close()
	mux := http.NewServeMux()
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) {
		record(&here)(w, r)
		http.Redirect(w, r, other.URL+"/", http.StatusFound)
	})
	mux.HandleFunc("/stay", func(w http.ResponseWriter, r *http.Request) {
		record(&here)(w, r)
		http.Redirect(w, r, "/landed", http.StatusFound)
	})
	mux.HandleFunc("/landed", record(&here))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	secretHeaders := []string{"Authorization", "Cookie", "Proxy-Authorization"}
	for _, engine := range []string{"net", "uring"} {
		for _, tc := range []struct {
			name string
			args []string
		}{
			{"headers", []string{"-H", "Authorization: Bearer s3cret", "-H", "Cookie: session=s3cret", "-H", "Proxy-Authorization: Basic s3cret"}},
			{"-a", []string{"-a", "alice:s3cret"}},
			{"URL user info", nil},
		} {
			t.Run(engine+"/"+tc.name, func(t *testing.T) {
				take(&here)
				take(&there)
				base := srv.URL
				if tc.args == nil {
					base = strings.Replace(srv.URL, "http://", "http://alice:s3cret@", 1)
				}
				for _, path := range []string{"/away", "/stay"} {
					args := append([]string{"-n", "4", "-c", "1", "-r", "5", "--engine", engine, "--no-tui", "--output-format", "quiet"}, tc.args...)
					if _, stderr, code := hail(t, append(args, base+path)...); code != 0 {
						t.Fatalf("%s: exit %d: %s", path, code, stderr)
					}
				}
				thereH, hereH := take(&there), take(&here)
				if len(thereH) != 4 || len(hereH) != 12 {
					t.Fatalf("requests: %d at the other origin (want 4), %d here (want 4 + 4 + 4)", len(thereH), len(hereH))
				}
				for _, h := range thereH {
					for _, name := range secretHeaders {
						if v := h.Get(name); v != "" {
							t.Errorf("%s crossed to another origin: %q", name, v)
						}
					}
				}
				for i, h := range hereH {
					if h.Get("Authorization") == "" {
						t.Errorf("request %d on the first origin (or its own hops) lost its Authorization", i)
					}
				}
			})
		}
	}
}
