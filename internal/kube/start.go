package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hail-loadgen/hail/internal/barrier"
)

// MinLead is the least time between publishing the start and the start:
// every shard must have it before it comes.
const MinLead = time.Second

// clockSample is one shard's answer at its barrier, and its clock's
// offset from this machine's (the shard's clock minus ours, estimated at
// the middle of the round trip).
type clockSample struct {
	state  barrier.State
	offset time.Duration
	rtt    time.Duration
}

// askReady asks a shard at its barrier whether it is ready.
func (r *Runner) askReady(ctx context.Context, pod string) (clockSample, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	t0 := time.Now()
	code, rc, err := r.io.Proxy(ctx, "GET", pod, barrierPort, "/ready", nil, nil, nil)
	t1 := time.Now()
	if err != nil {
		return clockSample{}, err
	}
	defer rc.Close()
	var st barrier.State
	if err := json.NewDecoder(rc).Decode(&st); err != nil {
		return clockSample{}, fmt.Errorf("GET /ready: %d, not the barrier's answer: %v", code, err)
	}
	mid := t0.Add(t1.Sub(t0) / 2)
	return clockSample{state: st, offset: time.Unix(0, st.NowUnixNano).Sub(mid), rtt: t1.Sub(t0)}, nil
}

// startTime is the start to publish: this machine's now, moved into the
// shards' clock (the median of their offsets: the shards' clocks agree with
// each other, through NTP or by sharing a node, while this machine's may
// not), plus a lead that lets every shard hear of it first.
func startTime(now time.Time, samples []clockSample, minLead time.Duration) time.Time {
	offs := make([]time.Duration, 0, len(samples))
	var worst time.Duration
	for _, s := range samples {
		offs = append(offs, s.offset)
		worst = max(worst, s.rtt)
	}
	slices.Sort(offs)
	batches := (len(samples) + postParallel - 1) / postParallel
	lead := minLead + 2*worst + time.Duration(batches)*4*worst
	return now.Add(offs[len(offs)/2] + lead)
}

// postParallel is how many shards are sent a request at once.
const postParallel = 16

// each calls f for every shard in pods, postParallel at a time, and
// returns the errors by index.
func each(pods map[int]string, f func(i int, pod string) error) map[int]error {
	var mu sync.Mutex
	errs := map[int]error{}
	sem := make(chan struct{}, postParallel)
	var wg sync.WaitGroup
	for i, pod := range pods {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := f(i, pod); err != nil {
				mu.Lock()
				errs[i] = err
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errs
}

// publish sends every shard the start time; an error names the first
// shard that refused it (the run is then called off).
func (r *Runner) publish(ctx context.Context, pods map[int]string, at time.Time) error {
	q := url.Values{"at": {strconv.FormatInt(at.UnixNano(), 10)}}
	errs := each(pods, func(i int, pod string) error {
		c, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_, err := proxyBody(c, r.io, "POST", pod, barrierPort, "/start", q, r.barrierToken, nil)
		return err
	})
	if len(errs) == 0 {
		return nil
	}
	first := -1
	for i := range errs {
		if first < 0 || i < first {
			first = i
		}
	}
	return fmt.Errorf("shard %d did not take the start time: %v", first, errs[first])
}

// stopShards asks every shard in pods to stop (before the start: to call
// the run off) and returns the ones that could not be asked.
func (r *Runner) stopShards(ctx context.Context, pods map[int]string, why string) map[int]error {
	q := url.Values{"why": {why}}
	return each(pods, func(i int, pod string) error {
		c, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_, err := proxyBody(c, r.io, "POST", pod, barrierPort, "/stop", q, r.barrierToken, nil)
		return err
	})
}

// requestsOf reads hail_requests_total from a shard's metrics.
func (r *Runner) requestsOf(ctx context.Context, pod string) (float64, bool) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	b, err := proxyBody(ctx, r.io, "GET", pod, barrierPort, "/metrics", nil, nil, nil)
	if err != nil {
		return 0, false
	}
	return counter(string(b), "hail_requests_total")
}

// counter is the value of a counter in Prometheus' text format (the one
// series of that name a shard serves). Parsed by hand: one line of a
// format this package does not otherwise need.
func counter(text, name string) (float64, bool) {
	for line := range strings.SplitSeq(text, "\n") {
		rest, ok := strings.CutPrefix(line, name)
		if !ok || rest == "" || (rest[0] != ' ' && rest[0] != '{') {
			continue
		}
		if rest[0] == '{' {
			end := strings.LastIndexByte(rest, '}')
			if end < 0 {
				continue
			}
			rest = rest[end+1:]
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(f[0], 64)
		return v, err == nil
	}
	return 0, false
}
