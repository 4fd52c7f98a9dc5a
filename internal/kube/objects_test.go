package kube

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	psa "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
)

// restrictedProblems is what Kubernetes' own Pod Security admission
// (the restricted level, latest version) says against a pod.
func restrictedProblems(t *testing.T, meta *metav1.ObjectMeta, spec *corev1.PodSpec) []string {
	t.Helper()
	ev, err := policy.NewEvaluator(policy.DefaultChecks())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range ev.EvaluatePod(psa.LevelVersion{Level: psa.LevelRestricted, Version: psa.LatestVersion()}, meta, spec) {
		if !r.Allowed {
			out = append(out, r.ForbiddenReason+": "+r.ForbiddenDetail)
		}
	}
	return out
}

// Every pod a run makes passes the restricted Pod Security Standard, as
// Kubernetes' own admission code judges it; and the check can fail.
func TestObjectsRestricted(t *testing.T) {
	t.Parallel()
	s := testSpec(3)
	s.Claim = "results"
	s.Files = []File{{Path: "/data/users.csv", Key: "f0-users.csv", Size: 10}, {Path: "/data/big.bin", Key: "f1-big.bin", Size: 2 << 20, OnVolume: true}}
	job := s.Job()
	if bad := restrictedProblems(t, &job.Spec.Template.ObjectMeta, &job.Spec.Template.Spec); len(bad) > 0 {
		t.Errorf("shards: %q", bad)
	}
	pod := s.FilesPod("tok")
	if bad := restrictedProblems(t, &pod.ObjectMeta, &pod.Spec); len(bad) > 0 {
		t.Errorf("volume helper: %q", bad)
	}
	broken := job.Spec.Template.Spec.DeepCopy()
	broken.Containers[0].SecurityContext.AllowPrivilegeEscalation = nil
	broken.Volumes = append(broken.Volumes, corev1.Volume{Name: "h", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}})
	if bad := restrictedProblems(t, &job.Spec.Template.ObjectMeta, broken); len(bad) < 2 {
		t.Errorf("a pod with escalation and a hostPath passed: %q", bad)
	}
}

// The Job: Indexed, every shard at once, none re-run; the shard's args are
// hail's (a $ doubled, so Kubernetes passes it on) and its own; each file
// is mounted at its own path; the results volume with pvc:.
func TestObjectsJob(t *testing.T) {
	t.Parallel()
	s := testSpec(4)
	s.Args = []string{"-z", "10s", "-H", "X-Note: $(HOME) $$", "http://t/"}
	s.Duration = 10 * time.Second
	s.Files = []File{{Path: "/home/me/body.json", Key: "f0-body.json"}}
	j := s.Job()
	sp := j.Spec
	if *sp.CompletionMode != "Indexed" || *sp.Completions != 4 || *sp.Parallelism != 4 || *sp.BackoffLimitPerIndex != 0 ||
		*sp.ActiveDeadlineSeconds != int64(5+10+600) || *sp.TTLSecondsAfterFinished != 3600 {
		t.Errorf("job spec %+v", sp)
	}
	c := sp.Template.Spec.Containers[0]
	want := []string{"-z", "10s", "-H", "X-Note: $$(HOME) $$$$", "http://t/", "--shard=$(JOB_COMPLETION_INDEX)/4", "--start-at=barrier",
		"--metrics-addr=0.0.0.0:9090", "--no-tui", "--output-format=json"}
	if !slices.Equal(c.Args, want) {
		t.Errorf("args %q, want %q", c.Args, want)
	}
	if !slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "HAIL_BARRIER_TOKEN" && e.Value == "barrier-token" }) {
		t.Errorf("env %+v lacks the barrier's token", c.Env)
	}
	if m := c.VolumeMounts; len(m) != 1 || m[0].MountPath != "/home/me/body.json" || m[0].SubPath != "f0-body.json" || !m[0].ReadOnly {
		t.Errorf("mounts %+v", m)
	}
	s.Claim = "results"
	s.Files[0].OnVolume = true
	c = s.Job().Spec.Template.Spec.Containers[0]
	if last := c.Args[len(c.Args)-1]; last != "--output=/results/r1.shard-$(JOB_COMPLETION_INDEX).json" {
		t.Errorf("output %q", last)
	}
	if m := c.VolumeMounts; len(m) != 2 || m[0].SubPath != "r1.files/f0-body.json" || m[0].Name != "results" || m[1].MountPath != "/results" {
		t.Errorf("mounts %+v", m)
	}
	cm := s.ConfigMap(map[string][]byte{"f0-body.json": []byte("x")})
	if _, ok := cm.BinaryData["f0-body.json"]; ok || !strings.Contains(cm.Data[specKey], `"claim": "results"`) {
		t.Errorf("a file on the volume is in the ConfigMap, or the spec is not: %+v", cm)
	}
}

// Bad settings are refused with one line naming the setting.
func TestSpecCheck(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		change func(s *Spec)
		want   string
	}{
		{func(s *Spec) { s.Name = "Run_1" }, "--run \"Run_1\""},
		{func(s *Spec) { s.Shards = 0 }, "--shards 0"},
		{func(s *Spec) { s.CPU = "two" }, "--cpu \"two\""},
		{func(s *Spec) { s.Memory = "1 G" }, "--memory \"1 G\""},
		{func(s *Spec) { s.CPULimit = "x" }, "--cpu-limit \"x\""},
		{func(s *Spec) { s.Args = nil }, "no hail arguments"},
	} {
		s := testSpec(2)
		tc.change(s)
		if err := s.Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v, want %q", err, tc.want)
		}
	}
	if err := testSpec(2).Check(); err != nil {
		t.Error(err)
	}
}
