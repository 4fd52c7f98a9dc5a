package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hail-loadgen/hail/internal/serve"
	"github.com/hail-loadgen/hail/result"
)

// The network-namespace helper: the test binary runs itself in a fresh network namespace (which
// only this test creates and which dies with it), sets the namespace up, starts the built-in
// server there and runs hail against it. Namespaced sysctls such as ip_local_port_range can then
// be changed without touching the machine's own network.
const (
	netnsHelperEnv = "HAIL_NETNS_HELPER" // set: act as the helper
	netnsPortsEnv  = "HAIL_NETNS_PORTS"  // "LOW HIGH": ip_local_port_range inside the namespace
	netnsBinEnv    = "HAIL_NETNS_BIN"    // the hail binary to run
	netnsArgsEnv   = "HAIL_NETNS_ARGS"   // hail's arguments, separated by \x1f; {url} is the server
)

// netnsHelper runs in the child: it brings loopback up, applies the port range, serves on
// 127.0.0.1 and runs hail with stdout and stderr passed through. Returns hail's exit code, or 3
// when the namespace could not be set up.
func netnsHelper() int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "netns helper: "+format+"\n", a...)
		return 3
	}
	if err := loopbackUp(); err != nil {
		return fail("bringing lo up: %v", err)
	}
	if r := os.Getenv(netnsPortsEnv); r != "" {
		if err := os.WriteFile("/proc/sys/net/ipv4/ip_local_port_range", []byte(r), 0o644); err != nil {
			return fail("setting ip_local_port_range: %v", err)
		}
	}
	s := serve.New(serve.Config{Addr: "127.0.0.1:0"})
	a, err := s.Listen()
	if err != nil {
		return fail("listen: %v", err)
	}
	go s.Serve()
	defer s.Close()
	args := strings.Split(os.Getenv(netnsArgsEnv), "\x1f")
	for i := range args {
		args[i] = strings.ReplaceAll(args[i], "{url}", "http://"+a.String())
	}
	cmd := exec.Command(os.Getenv(netnsBinEnv), args...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.ExitCode()
	case err != nil:
		return fail("running hail: %v", err)
	}
	return 0
}

// loopbackUp sets IFF_UP on lo (a new network namespace starts with it down).
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// inNetns runs hail with args in a new network namespace whose ephemeral port range is ports.
// It skips the test when this machine does not allow creating a network namespace.
func inNetns(t *testing.T, ports string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(os.Environ(), netnsHelperEnv+"=1", netnsPortsEnv+"="+ports, netnsBinEnv+"="+hailBin,
		netnsArgsEnv+"="+strings.Join(args, "\x1f"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
	var so, se strings.Builder
	cmd.Stdout, cmd.Stderr = &so, &se
	if err := cmd.Start(); err != nil {
		if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) {
			t.Skipf("cannot create a network namespace here (needs CAP_SYS_ADMIN): %v", err)
		}
		t.Fatal(err)
	}
	timer := time.AfterFunc(60*time.Second, func() { cmd.Process.Kill() })
	defer timer.Stop()
	err = cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if code == 3 {
		t.Fatalf("setting up the namespace failed:\n%s", se.String())
	}
	return so.String(), se.String(), code
}

// With ten ephemeral ports and -c 20, half of the connections cannot get a local port: those
// attempts are counted as "no free local ports", the report says how to fix it once, the other
// connections carry on, and every request is accounted for.
func TestEphemeralPortsExhausted(t *testing.T) {
	t.Parallel()
	for _, engine := range []string{"net", "uring"} {
		t.Run(engine, func(t *testing.T) {
			stdout, stderr, code := inNetns(t, "40000 40009", "--engine", engine, "-c", "20", "-n", "400",
				"-t", "2s", "--no-tui", "-j", "{url}/")
			if code != 0 {
				if engine == "uring" && strings.Contains(stderr, "io_uring") {
					t.Skipf("io_uring unavailable: %s", stderr)
				}
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var r result.Result
			if err := json.Unmarshal([]byte(stdout), &r); err != nil {
				t.Fatalf("the report is not JSON: %v\n%s", err, stdout)
			}
			if got := r.Hail.Counts.Requests; got != 400 {
				t.Errorf("%d requests accounted for, want 400", got)
			}
			t.Logf("statuses %v, errors %v, hints %q", r.StatusCodeDistribution, r.ErrorDistribution, r.Hail.Hints)
			ports := r.ErrorDistribution["no free local ports"]
			if ports == 0 {
				t.Errorf("no 'no free local ports' errors: %v", r.ErrorDistribution)
			}
			if ok := r.StatusCodeDistribution["200"]; ok == 0 || ok+ports != 400 {
				t.Errorf("200s %d + port errors %d != 400 (errors: %v)", ok, ports, r.ErrorDistribution)
			}
			hints := 0
			for _, h := range r.Hail.Hints {
				if strings.Contains(h, "ip_local_port_range") {
					hints++
				}
			}
			if hints != 1 {
				t.Errorf("the ephemeral-port hint appears %d times, want once: %q", hints, r.Hail.Hints)
			}
		})
	}
}
