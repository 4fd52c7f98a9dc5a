package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// The parts of a Kubernetes object the deploy tests read.
type kubeObject struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec struct {
		// Job
		CompletionMode       string                 `yaml:"completionMode"`
		Completions          int                    `yaml:"completions"`
		Parallelism          int                    `yaml:"parallelism"`
		BackoffLimitPerIndex *int                   `yaml:"backoffLimitPerIndex"`
		Template             struct{ Spec podSpec } `yaml:"template"`
		podSpec              `yaml:",inline"`       // Pod
	} `yaml:"spec"`
}

type podSpec struct {
	HostNetwork         bool             `yaml:"hostNetwork"`
	HostPID             bool             `yaml:"hostPID"`
	HostIPC             bool             `yaml:"hostIPC"`
	SecurityContext     *securityContext `yaml:"securityContext"`
	Containers          []container      `yaml:"containers"`
	InitContainers      []container      `yaml:"initContainers"`
	EphemeralContainers []container      `yaml:"ephemeralContainers"`
	Volumes             []map[string]any `yaml:"volumes"`
}

type container struct {
	Name  string   `yaml:"name"`
	Image string   `yaml:"image"`
	Args  []string `yaml:"args"`
	Env   []struct {
		Name  string `yaml:"name"`
		Value string `yaml:"value"`
	} `yaml:"env"`
	Ports []struct {
		HostPort int `yaml:"hostPort"`
	} `yaml:"ports"`
	Resources struct {
		Requests map[string]string `yaml:"requests"`
		Limits   map[string]string `yaml:"limits"`
	} `yaml:"resources"`
	SecurityContext *securityContext `yaml:"securityContext"`
}

type securityContext struct {
	Privileged               *bool  `yaml:"privileged"`
	AllowPrivilegeEscalation *bool  `yaml:"allowPrivilegeEscalation"`
	RunAsNonRoot             *bool  `yaml:"runAsNonRoot"`
	RunAsUser                *int   `yaml:"runAsUser"`
	ProcMount                string `yaml:"procMount"`
	Capabilities             *struct {
		Add  []string `yaml:"add"`
		Drop []string `yaml:"drop"`
	} `yaml:"capabilities"`
	SeccompProfile *struct {
		Type string `yaml:"type"`
	} `yaml:"seccompProfile"`
	AppArmorProfile *struct {
		Type string `yaml:"type"`
	} `yaml:"appArmorProfile"`
	SELinuxOptions *struct {
		Type, User, Role string
	} `yaml:"seLinuxOptions"`
	Sysctls []struct {
		Name string `yaml:"name"`
	} `yaml:"sysctls"`
	WindowsOptions *struct {
		HostProcess *bool `yaml:"hostProcess"`
	} `yaml:"windowsOptions"`
}

// restrictedViolations lists what in a pod spec the "restricted" Pod
// Security Standard (Kubernetes' policy, which includes "baseline") forbids,
// one line per violation: https://kubernetes.io/docs/concepts/security/pod-security-standards/
func restrictedViolations(p podSpec) []string {
	var bad []string
	if p.HostNetwork || p.HostPID || p.HostIPC {
		bad = append(bad, "host namespaces (hostNetwork, hostPID, hostIPC) must be unset")
	}
	allowedVolumes := []string{"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret"}
	for _, v := range p.Volumes {
		for k := range v {
			if k != "name" && !slices.Contains(allowedVolumes, k) {
				bad = append(bad, fmt.Sprintf("volume %v: type %s is not allowed", v["name"], k))
			}
		}
	}
	pod := p.SecurityContext
	if pod == nil {
		pod = &securityContext{}
	}
	bad = append(bad, contextViolations("pod", pod)...)
	all := slices.Concat(p.Containers, p.InitContainers, p.EphemeralContainers)
	if len(all) == 0 {
		bad = append(bad, "no containers")
	}
	for _, c := range all {
		sc := c.SecurityContext
		if sc == nil {
			sc = &securityContext{}
		}
		name := "container " + c.Name
		bad = append(bad, contextViolations(name, sc)...)
		for _, port := range c.Ports {
			if port.HostPort != 0 {
				bad = append(bad, name+": hostPort must be unset")
			}
		}
		if sc.Privileged != nil && *sc.Privileged {
			bad = append(bad, name+": privileged")
		}
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			bad = append(bad, name+": allowPrivilegeEscalation must be false")
		}
		if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
			bad = append(bad, name+": capabilities.drop must include ALL")
		} else if slices.ContainsFunc(sc.Capabilities.Add, func(c string) bool { return c != "NET_BIND_SERVICE" }) {
			bad = append(bad, name+": capabilities.add may hold only NET_BIND_SERVICE")
		}
		if (sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot) && (pod.RunAsNonRoot == nil || !*pod.RunAsNonRoot || sc.RunAsNonRoot != nil) {
			bad = append(bad, name+": runAsNonRoot must be true (on the pod or the container)")
		}
		if sc.SeccompProfile == nil && pod.SeccompProfile == nil {
			bad = append(bad, name+": seccompProfile must be RuntimeDefault or Localhost (on the pod or the container)")
		}
	}
	return bad
}

// contextViolations are the rules a pod's and a container's security
// context share.
func contextViolations(who string, sc *securityContext) []string {
	var bad []string
	if sc.RunAsUser != nil && *sc.RunAsUser == 0 {
		bad = append(bad, who+": runAsUser must not be 0")
	}
	if s := sc.SeccompProfile; s != nil && s.Type != "RuntimeDefault" && s.Type != "Localhost" {
		bad = append(bad, who+": seccompProfile.type "+s.Type)
	}
	if a := sc.AppArmorProfile; a != nil && a.Type != "RuntimeDefault" && a.Type != "Localhost" {
		bad = append(bad, who+": appArmorProfile.type "+a.Type)
	}
	if o := sc.SELinuxOptions; o != nil && (o.User != "" || o.Role != "" || !slices.Contains([]string{"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"}, o.Type)) {
		bad = append(bad, who+": seLinuxOptions")
	}
	if sc.ProcMount != "" && sc.ProcMount != "Default" {
		bad = append(bad, who+": procMount "+sc.ProcMount)
	}
	safe := []string{"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.ip_unprivileged_port_start", "net.ipv4.tcp_syncookies",
		"net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports", "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout",
		"net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes"}
	for _, s := range sc.Sysctls {
		if !slices.Contains(safe, s.Name) {
			bad = append(bad, who+": sysctl "+s.Name)
		}
	}
	if w := sc.WindowsOptions; w != nil && w.HostProcess != nil && *w.HostProcess {
		bad = append(bad, who+": windowsOptions.hostProcess")
	}
	return bad
}

// The checker catches what the restricted profile forbids (it must be
// able to fail).
func TestRestrictedViolations(t *testing.T) {
	t.Parallel()
	yes, no, root := true, false, 0
	good := func() podSpec {
		return podSpec{SecurityContext: &securityContext{RunAsNonRoot: &yes, SeccompProfile: &struct {
			Type string `yaml:"type"`
		}{"RuntimeDefault"}}, Containers: []container{{Name: "c", SecurityContext: &securityContext{AllowPrivilegeEscalation: &no,
			Capabilities: &struct {
				Add  []string `yaml:"add"`
				Drop []string `yaml:"drop"`
			}{Drop: []string{"ALL"}}}}}}
	}
	if bad := restrictedViolations(good()); len(bad) != 0 {
		t.Fatalf("a restricted pod: %v", bad)
	}
	for name, breakIt := range map[string]func(p *podSpec){
		"escalation":  func(p *podSpec) { p.Containers[0].SecurityContext.AllowPrivilegeEscalation = nil },
		"caps":        func(p *podSpec) { p.Containers[0].SecurityContext.Capabilities.Drop = nil },
		"add":         func(p *podSpec) { p.Containers[0].SecurityContext.Capabilities.Add = []string{"NET_RAW"} },
		"nonroot":     func(p *podSpec) { p.SecurityContext.RunAsNonRoot = nil },
		"root":        func(p *podSpec) { p.Containers[0].SecurityContext.RunAsUser = &root },
		"seccomp":     func(p *podSpec) { p.SecurityContext.SeccompProfile = nil },
		"hostnetwork": func(p *podSpec) { p.HostNetwork = true },
		"hostpath":    func(p *podSpec) { p.Volumes = []map[string]any{{"name": "h", "hostPath": map[string]any{"path": "/"}}} },
		"init":        func(p *podSpec) { p.InitContainers = []container{{Name: "mkdir"}} },
		"privileged":  func(p *podSpec) { p.Containers[0].SecurityContext.Privileged = &yes },
	} {
		p := good()
		breakIt(&p)
		if len(restrictedViolations(p)) == 0 {
			t.Errorf("%s: not caught", name)
		}
	}
}

// renderManifests runs deploy/kubernetes/run.sh --print with args and
// decodes the objects it prints.
func renderManifests(t *testing.T, env []string, args ...string) []kubeObject {
	t.Helper()
	trackDeployFiles(t)
	cmd := exec.Command("bash", append([]string{"../../deploy/kubernetes/run.sh", "--print"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("run.sh --print %v: %v: %s", args, err, stderr.String())
	}
	var objs []kubeObject
	dec := yaml.NewDecoder(&out)
	for {
		var o kubeObject
		if err := dec.Decode(&o); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("run.sh --print %v: not YAML: %v", args, err)
		}
		objs = append(objs, o)
	}
	return objs
}

// trackDeployFiles reads deploy/kubernetes's files in the test process, so
// go test's cache, which sees only what the test process opens (not bash),
// reruns these tests when run.sh or a manifest changes.
func trackDeployFiles(t *testing.T) {
	t.Helper()
	entries, err := os.ReadDir("../../deploy/kubernetes")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, err := os.ReadFile(filepath.Join("../../deploy/kubernetes", e.Name())); err != nil {
			t.Fatal(err)
		}
	}
}

// expand does Kubernetes' $(VAR) expansion of an argument ($$ is a $).
func expand(s string, vars map[string]string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.HasPrefix(s[i:], "$$") {
			b.WriteByte('$')
			i++
			continue
		}
		if strings.HasPrefix(s[i:], "$(") {
			if j := strings.IndexByte(s[i:], ')'); j > 0 {
				if v, ok := vars[s[i+2:i+j]]; ok {
					b.WriteString(v)
					i += j
					continue
				}
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// The manifests run.sh renders carry its settings, pass the restricted Pod
// Security Standard, and give hail only flags it takes (parsed by hail's
// own commands, as Kubernetes expands them).
func TestDeployManifests(t *testing.T) {
	t.Parallel()
	load := []string{"-z", "10s", "-q", "900", "-c", "8", "-H", `X-Note: a "quoted" $(HOME) \ value`}
	before := time.Now().Unix()
	objs := renderManifests(t, []string{"LEAD=45"}, append([]string{"--shards", "3", "--target", "http://10.88.0.9:8080/", "--cpu", "250m",
		"--cpu-limit", "1500m", "--memory", "128Mi", "--run", "e2e-3", "--image", "registry.example/hail:v2", "--"}, load...)...)
	if len(objs) != 1 {
		t.Fatalf("%d objects, want the shards Job", len(objs))
	}
	job := objs[0]
	if job.Kind != "Job" || job.Metadata.Name != "hail-shards-e2e-3" || job.Spec.CompletionMode != "Indexed" || job.Spec.Completions != 3 ||
		job.Spec.Parallelism != 3 || job.Spec.BackoffLimitPerIndex == nil || *job.Spec.BackoffLimitPerIndex != 0 {
		t.Errorf("job %+v", job)
	}
	pod := job.Spec.Template.Spec
	if bad := restrictedViolations(pod); len(bad) != 0 {
		t.Errorf("shards job: %s", strings.Join(bad, "; "))
	}
	c := pod.Containers[0]
	if c.Image != "registry.example/hail:v2" || c.Resources.Requests["cpu"] != "250m" || c.Resources.Limits["cpu"] != "1500m" ||
		c.Resources.Requests["memory"] != "128Mi" || c.Resources.Limits["memory"] != "128Mi" {
		t.Errorf("container %+v", c)
	}
	vars := map[string]string{"JOB_COMPLETION_INDEX": "2"}
	for _, e := range c.Env {
		if e.Value != "" {
			vars[e.Name] = e.Value
		}
	}
	if at, _ := strconv.ParseInt(vars["START_AT"], 10, 64); at < before+45 || at > time.Now().Unix()+45 {
		t.Errorf("START_AT %s, want now + 45", vars["START_AT"])
	}
	var args []string
	for _, a := range c.Args {
		args = append(args, expand(a, vars))
	}
	if !slices.Equal(args[:2], []string{"--shard=2/3", "--start-at=" + vars["START_AT"]}) || !slices.Contains(args, load[len(load)-1]) ||
		args[len(args)-1] != "http://10.88.0.9:8080/" {
		t.Errorf("args as Kubernetes passes them: %q", args)
	}
	root := newRootCmd()
	if err := root.ParseFlags(args); err != nil {
		t.Errorf("hail rejects the shard's args: %v", err)
	} else if h, _ := root.Flags().GetStringArray("header"); !slices.Contains(h, load[len(load)-1]) {
		t.Errorf("the header reached hail as %q", h)
	}

	// A shared volume: the shards write to it, the merge Job reads it.
	objs = renderManifests(t, nil, "--shards", "2", "--target", "http://t/", "--results", "pvc:hail-results", "--run", "r1")
	if len(objs) != 2 || objs[1].Metadata.Name != "hail-merge-r1" {
		t.Fatalf("pvc mode: %d objects", len(objs))
	}
	for _, o := range objs {
		if bad := restrictedViolations(o.Spec.Template.Spec); len(bad) != 0 {
			t.Errorf("%s: %s", o.Metadata.Name, strings.Join(bad, "; "))
		}
	}
	shardArgs := objs[0].Spec.Template.Spec.Containers[0].Args
	if out := expand(shardArgs[len(shardArgs)-1], map[string]string{"JOB_COMPLETION_INDEX": "1"}); out != "--output=/results/r1.shard-1.json" {
		t.Errorf("pvc shard output %q", out)
	}
	merge := newMergeCmd()
	margs := objs[1].Spec.Template.Spec.Containers[0].Args
	if margs[0] != "merge" || margs[1] != "/results/r1.shard-*.json" || merge.ParseFlags(margs[1:]) != nil {
		t.Errorf("merge args %q", margs)
	}

	// The target pod e2e.sh starts.
	raw, err := os.ReadFile("../../deploy/kubernetes/target-pod.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var target kubeObject
	if err := yaml.Unmarshal([]byte(strings.NewReplacer("__NAME__", "hail-serve", "__IMAGE__", "hail:local").Replace(string(raw))), &target); err != nil {
		t.Fatal(err)
	}
	if bad := restrictedViolations(target.Spec.podSpec); len(bad) != 0 || target.Kind != "Pod" {
		t.Errorf("target pod %s: %s", target.Kind, strings.Join(bad, "; "))
	}
	serve := newServeCmd()
	if args := target.Spec.Containers[0].Args; args[0] != "serve" || serve.ParseFlags(args[1:]) != nil {
		t.Errorf("target args %q", args)
	}
}

// run.sh refuses bad settings with one line naming the setting, before it
// touches a cluster.
func TestDeployRunBadSettings(t *testing.T) {
	t.Parallel()
	trackDeployFiles(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--shards", "0", "--target", "http://t/"}, "--shards 0"},
		{[]string{"--target", "t:8080"}, "--target 't:8080'"},
		{[]string{"--target", "http://t/", "--cpu", "two"}, "--cpu two"},
		{[]string{"--target", "http://t/", "--memory", "1 G"}, "--memory 1 G"},
		{[]string{"--target", "http://t/", "--run", "Run_1"}, "--run Run_1"},
		{[]string{"--target", "http://t/", "--results", "nfs"}, "--results nfs"},
		{[]string{"--target", "http://t/", "--", "-o", "x.json"}, "load flag -o"},
		{[]string{"--target", "http://t/", "--", "http://other/"}, "load flag http://other/"},
		{[]string{"--target", "http://t/", "--bogus"}, "unknown setting --bogus"},
	} {
		cmd := exec.Command("bash", append([]string{"../../deploy/kubernetes/run.sh", "--print"}, tc.args...)...)
		var out, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 || out.Len() != 0 || strings.Count(strings.TrimSpace(stderr.String()), "\n") != 0 ||
			!strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: %v, stdout %d bytes, stderr %q (want %q)", tc.args, err, out.Len(), stderr.String(), tc.want)
		}
	}
}

// kubectlStub is a kubectl that answers run.sh from canned files: a Job
// whose shard 0 succeeded (its log: a real shard result and a warning
// line) and whose shard 1 was OOM-killed.
const kubectlStub = `#!/bin/sh
echo "$*" >> "$STUB/calls"
case "$*" in
*"apply -f"*) exit 0 ;;
*"get job hail-shards-"*) echo "FailureTarget Failed " ;;
*"get pods -l job-name="*) printf '0 Succeeded hail-shards-r-0-abc \n1 Failed hail-shards-r-1-def \n' ;;
*"logs hail-shards-r-0-abc"*) cat "$STUB/shard0.log" ;;
*"get pod hail-shards-r-1-def"*) echo "OOMKilled (exit code 137) " ;;
*"logs hail-shards-r-1-def"*) echo "hail: runtime: out of memory" ;;
*) echo "stub kubectl: unexpected: $*" >&2; exit 1 ;;
esac
`

// run.sh names a failed shard with its pod's reason and last log line,
// merges the others with hail merge --failed, writes the result and the
// report marked incomplete, and exits 2.
func TestDeployRunFailedShard(t *testing.T) {
	t.Parallel()
	trackDeployFiles(t)
	base := startServe(t)
	stub := t.TempDir()
	out := t.TempDir()
	res := filepath.Join(stub, "shard0.json")
	if _, se, code := hail(t, "-n", "60", "-c", "4", "--no-tui", "--shard", "0/2", "-j", "-o", res, base+"/"); code != 0 {
		t.Fatal(se)
	}
	js, err := os.ReadFile(res)
	if err != nil {
		t.Fatal(err)
	}
	log := append([]byte("hail: warning: something to say\n"), js...)
	if err := os.WriteFile(filepath.Join(stub, "shard0.log"), log, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stub, "kubectl"), []byte(kubectlStub), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "../../deploy/kubernetes/run.sh", "--shards", "2", "--target", base+"/", "--run", "r",
		"--lead", "0", "--out", out, "--", "-n", "60", "-c", "4")
	cmd.Env = append(os.Environ(), "PATH="+stub+":"+os.Getenv("PATH"), "STUB="+stub, "HAIL="+hailBin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("run.sh hung: %s", stderr.String())
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Fatalf("run.sh: %v, want exit 2: %s", err, stderr.String())
	}
	se := stderr.String()
	for _, want := range []string{
		"run.sh: shard 1 FAILED: pod hail-shards-r-1-def: OOMKilled (exit code 137): hail: runtime: out of memory",
		"run.sh: shard 0 said: hail: warning: something to say",
		"hail merge: incomplete: shard 1/2 failed: pod hail-shards-r-1-def: OOMKilled (exit code 137): hail: runtime: out of memory",
		"run.sh: the run is INCOMPLETE",
	} {
		if !strings.Contains(se, want) {
			t.Errorf("stderr lacks %q:\n%s", want, se)
		}
	}
	if !strings.Contains(stdout.String(), "INCOMPLETE") {
		t.Errorf("the text report is not marked incomplete:\n%s", stdout.String())
	}
	m := readResultFile(t, filepath.Join(out, "r", "total.json"))
	if m.Hail.Counts.Requests != 30 || len(m.Hail.Merged.Incomplete) != 1 {
		t.Errorf("merged %d requests, incomplete %q", m.Hail.Counts.Requests, m.Hail.Merged.Incomplete)
	}
	if html, err := os.ReadFile(filepath.Join(out, "r", "report.html")); err != nil || !bytes.Contains(html, []byte("INCOMPLETE")) {
		t.Errorf("report.html: %v", err)
	}
}
