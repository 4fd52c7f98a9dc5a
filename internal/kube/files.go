package kube

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// TokenEnv is the environment variable that gives the volume helper its
// token: a request without it is refused.
const TokenEnv = "HAIL_KUBE_TOKEN"

// tokenHeader carries the token in the helper's requests.
const tokenHeader = "X-Hail-Token"

// FilesIdle is how long the volume helper waits for a request before it
// exits by itself (hail kube went away).
const FilesIdle = 10 * time.Minute

// maxStagedFile bounds a file put on the volume through the helper.
const maxStagedFile = 1 << 30

// fileName is a name the helper serves: one name, or a directory and a
// name, under its directory; no "..", no absolute path. Compiled when
// first used: every hail run links this package.
var fileName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?$`)
})

// FilesServer is the volume helper (hail kube files), run in a pod that
// mounts a run's results volume. It serves:
//
//	GET  /healthz        200
//	GET  /list           the names of the files under Dir starting with Prefix (JSON)
//	GET  /files/NAME     a file
//	PUT  /files/NAME     write a file (atomically: a temporary file, renamed)
//	POST /quit           exit
//
// Names start with Prefix (the run's name and a dot): the helper of one run
// reads and writes only that run's files.
type FilesServer struct {
	// Dir is the volume's mount point.
	Dir string
	// Prefix every name starts with.
	Prefix string
	// Token every request but /healthz must carry.
	Token string
	// Idle ends Serve after that long without a request (0: FilesIdle).
	Idle time.Duration

	last atomic.Int64 // Unix ns of the last request
	quit chan struct{}
}

// Serve serves on ln until /quit or the idle time passes.
func (s *FilesServer) Serve(ln net.Listener) error {
	if s.Token == "" {
		return fmt.Errorf("no token: set %s", TokenEnv)
	}
	idle := s.Idle
	if idle <= 0 {
		idle = FilesIdle
	}
	s.quit = make(chan struct{})
	s.last.Store(time.Now().UnixNano())
	srv := &http.Server{Handler: s.handler(), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	tick := time.NewTicker(min(idle/4, 10*time.Second))
	defer tick.Stop()
	for {
		select {
		case err := <-errc:
			return err
		case <-s.quit:
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			return srv.Shutdown(ctx)
		case <-tick.C:
			if time.Since(time.Unix(0, s.last.Load())) > idle {
				return srv.Close()
			}
		}
	}
}

func (s *FilesServer) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	mux.HandleFunc("GET /list", s.authorized(s.list))
	mux.HandleFunc("GET /files/{name...}", s.authorized(s.get))
	mux.HandleFunc("PUT /files/{name...}", s.authorized(s.put))
	mux.HandleFunc("POST /quit", s.authorized(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusOK)
		select {
		case <-s.quit:
		default:
			close(s.quit)
		}
	}))
	return mux
}

func (s *FilesServer) authorized(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.last.Store(time.Now().UnixNano())
		if subtle.ConstantTimeCompare([]byte(r.Header.Get(tokenHeader)), []byte(s.Token)) != 1 {
			http.Error(w, "no or wrong token", http.StatusForbidden)
			return
		}
		h(w, r)
	}
}

// path is NAME's path under Dir, or an error for a name outside the run.
func (s *FilesServer) path(name string) (string, error) {
	if !fileName().MatchString(name) || !strings.HasPrefix(name, s.Prefix) || strings.Contains(name, "..") {
		return "", fmt.Errorf("%q: not a file of this run", name)
	}
	return filepath.Join(s.Dir, filepath.FromSlash(name)), nil
}

func (s *FilesServer) list(w http.ResponseWriter, _ *http.Request) {
	entries, err := os.ReadDir(s.Dir)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	names := []string{}
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasPrefix(e.Name(), s.Prefix) {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(names)
}

func (s *FilesServer) get(w http.ResponseWriter, r *http.Request) {
	p, err := s.path(r.PathValue("name"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		http.Error(w, "no such file", http.StatusNotFound)
		return
	} else if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", "application/octet-stream")
	_, _ = io.Copy(w, f)
}

func (s *FilesServer) put(w http.ResponseWriter, r *http.Request) {
	p, err := s.path(r.PathValue("name"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if err := writeAtomic(p, http.MaxBytesReader(w, r.Body, maxStagedFile)); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusCreated)
}

// writeAtomic writes r to path through a temporary file in its directory
// (made if needed), renamed into place, readable by everyone.
func writeAtomic(path string, r io.Reader) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	_, err = io.Copy(tmp, r)
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
