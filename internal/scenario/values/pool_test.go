package values

import (
	"strconv"
	"sync"
	"testing"

	"github.com/hail-loadgen/hail/internal/random"
)

// Under concurrent puts, picks and takes, every value is taken at most
// once, none is invented, and the count stays exact.
func TestPoolConcurrent(t *testing.T) {
	p := NewPool("ids", 0)
	const workers, per = 8, 5000
	var wg sync.WaitGroup
	var mu sync.Mutex
	taken := map[string]int{}
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := random.New(uint64(w))
			var mine []string
			for i := range per {
				p.Put(strconv.Itoa(w*per+i), w)
				if v, ok := p.Pick(r); ok {
					if n, err := strconv.Atoi(v); err != nil || n < 0 || n >= workers*per {
						t.Errorf("picked %q", v)
					}
				}
				if i%2 == 0 {
					if v, ok := p.Take(r); ok {
						mine = append(mine, v)
					}
				}
			}
			mu.Lock()
			for _, v := range mine {
				taken[v]++
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	for v, n := range taken {
		if n != 1 {
			t.Fatalf("value %s taken %d times", v, n)
		}
	}
	if got, want := p.Len()+len(taken), workers*per; got != want {
		t.Errorf("live %d + taken %d = %d, want %d", p.Len(), len(taken), got, want)
	}
	r := random.New(1)
	rest := 0
	for {
		v, ok := p.Take(r)
		if !ok {
			break
		}
		if taken[v] > 0 {
			t.Fatalf("value %s taken twice", v)
		}
		taken[v]++
		rest++
	}
	if len(taken) != workers*per || p.Len() != 0 {
		t.Errorf("drained %d values, %d distinct taken, %d left", rest, len(taken), p.Len())
	}
}

// A full pool drops old values, counts them, and keeps its size.
func TestPoolCap(t *testing.T) {
	p := NewPool("small", 10)
	for i := range 100 {
		p.Put(strconv.Itoa(i), i)
	}
	if p.Len() != 10 || p.Dropped() != 90 {
		t.Errorf("len %d dropped %d, want 10 and 90", p.Len(), p.Dropped())
	}
	r := random.New(2)
	for range 10 {
		v, ok := p.Take(r)
		if n, _ := strconv.Atoi(v); !ok || n < 80 {
			t.Errorf("took %q: an old value survived", v)
		}
	}
	if _, ok := p.Take(r); ok {
		t.Error("took from an empty pool")
	}
	if _, ok := p.Pick(r); ok {
		t.Error("picked from an empty pool")
	}
}

// A pool filled by fewer workers than it has shards (the uring engine's
// builders, one per thread) still holds its whole capacity before it drops.
func TestPoolFewWriters(t *testing.T) {
	p := NewPool("ids", 1000)
	for i := range 1000 {
		p.Put(strconv.Itoa(i), i%2)
	}
	if p.Len() != 1000 || p.Dropped() != 0 {
		t.Errorf("len %d dropped %d, want 1000 and 0", p.Len(), p.Dropped())
	}
	p.Put("x", 0)
	if p.Len() != 1000 || p.Dropped() != 1 {
		t.Errorf("full: len %d dropped %d, want 1000 and 1", p.Len(), p.Dropped())
	}
}
