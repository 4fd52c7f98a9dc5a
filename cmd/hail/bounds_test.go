package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A rate whose -n requests could not be sent in any sensible time is
// refused at once, naming both flags and -z.
func TestScheduleTooLong(t *testing.T) {
	t.Parallel()
	start := time.Now()
	_, se, code := hail(t, "-q", "1e-9", "-n", "5", "--no-tui", "http://127.0.0.1:1/")
	if code != 1 || !strings.Contains(se, "hail: -q 1e-09: with -n 5 the last request would be due after 127 years") || strings.Count(se, "\n") != 1 {
		t.Errorf("exit %d, %q", code, se)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("took %v", el)
	}
	// Bounded by -z, a slow rate runs, and hail says what it will do.
	base := startServe(t)
	so, se, code := hail(t, "-q", "0.1", "-z", "1s", "--no-tui", "-j", base+"/")
	if code != 0 || !strings.Contains(se, "hail: note: -z 1s: at -q 0.1 only the first request is due within it") {
		t.Errorf("exit %d, %q", code, se)
	}
	var doc struct {
		Hail struct{ Counts struct{ Requests int64 } }
	}
	if err := json.Unmarshal([]byte(so), &doc); err != nil || doc.Hail.Counts.Requests != 1 {
		t.Errorf("%v, %d requests", err, doc.Hail.Counts.Requests)
	}
}

// -c far above -n is lowered to -n, said on stderr and in the config, and
// costs no more memory than the requests need (a million connections'
// state was 986 MB), on both engines.
func TestConnectionsFitRequests(t *testing.T) {
	t.Parallel()
	base := startServe(t)
	for _, engine := range []string{"net", "uring"} {
		t.Run(engine, func(t *testing.T) {
			cmd := exec.Command(hailBin, "-c", "1000000", "-n", "500", "--engine", engine, "--no-tui", "-j", base+"/")
			var so, se bytes.Buffer
			cmd.Stdout, cmd.Stderr = &so, &se
			if err := cmd.Run(); err != nil {
				if engine == "uring" && strings.Contains(se.String(), "--engine uring:") {
					t.Skipf("io_uring unavailable: %s", se.String())
				}
				t.Fatalf("%v: %s", err, se.String())
			}
			if !strings.Contains(se.String(), "hail: note: -c 1000000: lowered to 500: a run of 500 requests (-n) needs no more connections") {
				t.Errorf("stderr %q", se.String())
			}
			var doc struct {
				Hail struct {
					Counts struct{ Requests, Responses int64 }
					Config struct{ Connections int }
				}
			}
			if err := json.Unmarshal(so.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			if doc.Hail.Config.Connections != 500 || doc.Hail.Counts.Responses != 500 {
				t.Errorf("config connections %d, responses %d", doc.Hail.Config.Connections, doc.Hail.Counts.Responses)
			}
			if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && ru.Maxrss > 300<<10 {
				t.Errorf("peak RSS %d MiB for 500 requests", ru.Maxrss>>10)
			}
		})
	}
}
