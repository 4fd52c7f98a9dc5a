package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/yaml"
)

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

// hail kube reads a distributed run's arguments with the command they are
// for: every file they name becomes absolute and is shipped (flags marked
// as files, --form's @FILE, a scenario and the files it reads, a directory
// of .proto files); a scenario file alone means hail run; hail kube's own
// flags, a bad flag, a wrong number of arguments and a command that does
// not shard are refused with one line.
func TestKubeArgs(t *testing.T) { // not parallel: relative paths need its own working directory
	dir := t.TempDir()
	for name, body := range map[string]string{
		"body.json": "{}", "ca.pem": "x", "users.csv": "id\n1\n2\n", "protos/a.proto": `syntax = "proto3"; package a; message M {} service S { rpc C(M) returns (M); }`,
		"s.yaml": "base: http://10.88.0.9:8080\nduration: 7s\nfeeds: {users: {file: users.csv, order: unique}}\nsteps: [{name: a, path: '/u/{{feed.users.id}}'}]\n",
		"g.yaml": "base: http://10.88.0.9:9090\nrequests: 5\nsteps: [{name: g, grpc: {call: a.S/C}}]\n",
	} {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	abs := func(n string) string { return filepath.Join(dir, n) }
	for _, tc := range []struct {
		name  string
		args  []string
		out   []string
		files []string
		dirs  []string
		z     time.Duration
	}{
		{"load", []string{"-z", "10s", "-Dbody.json", "--cacert=ca.pem", "-F", "f=@body.json;type=a/b", "http://t/"},
			[]string{"-z", "10s", "-D" + abs("body.json"), "--cacert=" + abs("ca.pem"), "-F", "f=@" + abs("body.json") + ";type=a/b", "http://t/"},
			[]string{abs("body.json"), abs("ca.pem"), abs("body.json")}, nil, 10 * time.Second},
		{"scenario alone", []string{"s.yaml", "-n", "100"}, []string{"run", abs("s.yaml"), "-n", "100"},
			[]string{abs("s.yaml"), abs("users.csv")}, nil, 7 * time.Second},
		{"grpc", []string{"grpc", "--insecure", "--proto", "protos/a.proto", "-i", "protos", "--call", "a.S/C", "-z", "1m", "10.0.0.7:9090"},
			[]string{"grpc", "--insecure", "--proto", abs("protos/a.proto"), "-i", abs("protos"), "--call", "a.S/C", "-z", "1m", "10.0.0.7:9090"},
			[]string{abs("protos/a.proto")}, []string{abs("protos")}, time.Minute},
		{"llm", []string{"llm", "-q", "4", "-z", "2m", "--cacert", "ca.pem", "--slo", "ttft=500ms", "https://gw/v1/completions"},
			[]string{"llm", "-q", "4", "-z", "2m", "--cacert", abs("ca.pem"), "--slo", "ttft=500ms", "https://gw/v1/completions"},
			[]string{abs("ca.pem")}, nil, 2 * time.Minute},
	} {
		k, err := parseKubeArgs(tc.args)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !slices.Equal(k.args, tc.out) || !slices.Equal(k.files, tc.files) || !slices.Equal(k.dirs, tc.dirs) || k.duration != tc.z {
			t.Errorf("%s:\n args %q\n want %q\n files %q dirs %q (want %q %q), -z %s", tc.name, k.args, tc.out, k.files, k.dirs, tc.files, tc.dirs, k.duration)
		}
		// The rewritten arguments parse to the same flags.
		root := newCommandTree()
		c, rest, _ := root.Find(k.args)
		if err := c.ParseFlags(rest); err != nil {
			t.Errorf("%s: the shards' arguments do not parse: %v", tc.name, err)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-z", "1s", "-o", "x.json", "http://t/"}, "--output is hail kube's"},
		{[]string{"--shard", "0/2", "http://t/"}, "--shard is hail kube's"},
		{[]string{"-j", "http://t/"}, "--json is hail kube's"},
		{[]string{"--bogus", "http://t/"}, "unknown flag: --bogus"},
		{[]string{"-z", "1s"}, "hail: expected one URL, got 0 arguments"},
		{[]string{"serve", "--addr", ":1"}, "hail serve does not shard"},
		{[]string{"-z", "1s", "--", "http://t/"}, "hold a --"},
		{[]string{"-D", "nope.json", "http://t/"}, ""}, // checked when shipped (kube.Ship)
		{[]string{"g.yaml"}, "hail kube reads a gRPC scenario's schema from its files"},
		{[]string{"missing.yaml"}, "missing.yaml"},
	} {
		_, err := parseKubeArgs(tc.args)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%q: %v", tc.args, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want one line with %q", tc.args, err, tc.want)
		}
	}
}

// hail kube run --dry-run prints the run's ConfigMap and Job; the shard's
// arguments, as Kubernetes expands them, reach hail as written (a header
// with $( and quotes), with the shard's own flags.
func TestKubeDryRun(t *testing.T) {
	t.Parallel()
	header := `X-Note: a "quoted" $(HOME) \ value`
	out, se, code := hail(t, "kube", "run", "--shards", "3", "--run", "e2e-3", "--image", "registry.example/hail:v2", "--cpu", "250m",
		"--memory", "128Mi", "--dry-run", "--", "-z", "10s", "-q", "900", "-H", header, "http://10.88.0.9:8080/")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, se)
	}
	docs := strings.Split(out, "\n---\n")
	if len(docs) != 2 || !strings.Contains(docs[0], "kind: ConfigMap") {
		t.Fatalf("output:\n%s", out)
	}
	var job batchv1.Job
	if err := yaml.Unmarshal([]byte(docs[1]), &job); err != nil {
		t.Fatal(err)
	}
	c := job.Spec.Template.Spec.Containers[0]
	if job.Name != "e2e-3" || *job.Spec.Completions != 3 || c.Image != "registry.example/hail:v2" || c.Resources.Requests.Cpu().String() != "250m" {
		t.Errorf("job %s, %d completions, container %+v", job.Name, *job.Spec.Completions, c)
	}
	var args []string
	for _, a := range c.Args {
		args = append(args, expand(a, map[string]string{"JOB_COMPLETION_INDEX": "2"}))
	}
	root := newCommandTree()
	if err := root.ParseFlags(args); err != nil {
		t.Fatalf("hail rejects the shard's args %q: %v", args, err)
	}
	if h, _ := root.Flags().GetStringArray("header"); !slices.Equal(h, []string{header}) {
		t.Errorf("the header reached hail as %q", h)
	}
	if s, _ := root.Flags().GetString("shard"); s != "2/3" {
		t.Errorf("--shard %q", s)
	}
	if s, _ := root.Flags().GetString("start-at"); s != "barrier" {
		t.Errorf("--start-at %q", s)
	}
}

// Bad settings get one line and exit 1, with nothing on stdout.
func TestKubeBadInput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"kube", "run", "--dry-run", "--results", "nfs", "--", "http://t/"}, `--results "nfs"`},
		{[]string{"kube", "run", "--dry-run", "--run", "Run_1", "--", "http://t/"}, `--run "Run_1"`},
		{[]string{"kube", "run", "--dry-run", "--shards", "0", "--", "http://t/"}, "--shards 0"},
		{[]string{"kube", "run", "--dry-run", "http://t/"}, "give hail's arguments after --"},
		{[]string{"kube", "run", "--dry-run", "--", "-D", "/nonexistent/b.json", "http://t/"}, "/nonexistent/b.json: no such file or directory (the shards need it)"},
		{[]string{"kube", "run", "--kubeconfig", "/nonexistent", "--", "http://t/"}, "no cluster to talk to"},
		{[]string{"kube", "collect"}, "accepts 1 arg(s)"},
	} {
		out, se, code := hailIn(t, tc.args...)
		if code != 1 || out != "" || strings.Count(strings.TrimSpace(se), "\n") != 0 || !strings.Contains(se, tc.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want %q", tc.args, code, out, se, tc.want)
		}
	}
}
