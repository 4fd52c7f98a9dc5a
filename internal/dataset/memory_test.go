package dataset

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/hail-loadgen/hail/internal/testtier"
)

// A big file costs its index (8 bytes a record) and little else: neither
// the heap nor the anonymous resident memory holds the file. 64 MB here;
// 1 GB in the soak tier.
func TestBigFileMemory(t *testing.T) {
	size := 64 << 20
	if testtier.On(testtier.Soak) {
		size = 1 << 30
	}
	p, records := bigJSONL(t, size)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	anon := rssAnon(t)
	d, err := Open(Spec{Kind: JSONL, Path: p}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	runtime.ReadMemStats(&after)
	grown := rssAnon(t) - anon
	index := records * 8
	if d.Records != records {
		t.Fatalf("%d records indexed, %d written", d.Records, records)
	}
	// What stays is the index, made at its size from the count of lines.
	runtime.GC()
	var live runtime.MemStats
	runtime.ReadMemStats(&live)
	if held := int(live.HeapAlloc) - int(before.HeapAlloc); held > index+index/32+1<<20 {
		t.Errorf("a %d MB file's dataset holds %d MB of heap for an index of %d MB", size>>20, held>>20, index>>20)
	}
	if alloc := int(after.TotalAlloc - before.TotalAlloc); alloc > index+index/32+1<<20 {
		t.Errorf("opening a %d MB file allocated %d MB for an index of %d MB", size>>20, alloc>>20, index>>20)
	}
	if grown > int64(index+index/4+16<<20) {
		t.Errorf("anonymous resident memory grew %d MB for an index of %d MB (file %d MB)", grown>>20, index>>20, size>>20)
	}
	rd := d.NewReader()
	var r Record
	for i := range uint64(1000) {
		rd.Read(i, &r)
		if r.Input != 12 || r.Output < 1 {
			t.Fatalf("record %d: %+v", d.Index(i), r)
		}
	}
	t.Logf("%d MB file, %d records: %d MB allocated, anonymous RSS +%d MB", size>>20, records, (after.TotalAlloc-before.TotalAlloc)>>20, grown>>20)
}

// rssAnon is the process's anonymous resident memory (RssAnon in
// /proc/self/status), in bytes; the test is skipped where there is none.
func rssAnon(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "RssAnon:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	t.Skip("no RssAnon")
	return 0
}
