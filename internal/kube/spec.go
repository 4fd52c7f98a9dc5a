// Package kube runs one distributed hail run on Kubernetes (hail kube):
// it ships the run's files in a ConfigMap (or on the results volume),
// starts the shards as an Indexed Job, watches their pods and events and
// fails within seconds with the cause when one cannot start, holds them at
// a start barrier until all are ready, shows their progress, follows their
// logs, and collects and merges their results — naming what happened to
// every shard, losing nothing a shard wrote. hail operator (Operator) runs
// HailRun objects with the same Runner, from inside the cluster.
//
// It talks to the cluster with client-go, the Kubernetes client: its REST
// client and kubeconfig loading, with a scheme of only the API groups it
// uses (Cluster, scheme.go), not client-go's typed clients, which would
// link every API group into every hail run. A shard needs no
// credentials: the barrier, the progress and the results volume are
// reached through the API server's pod proxy.
package kube

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Spec is one distributed run: what hail kube run creates, stored with it
// (the run's ConfigMap) so that collect and stop find it again.
type Spec struct {
	// Name names the run and its objects: a DNS label.
	Name string `json:"name"`
	// Namespace is where the run's objects are.
	Namespace string `json:"namespace"`
	// Shards is how many shards (pods) run at once.
	Shards int `json:"shards"`
	// Image is the container image with hail (deploy/Dockerfile).
	Image string `json:"image"`
	// CPU and Memory are each shard's requests (Memory its limit too);
	// CPULimit, if set, its CPU limit.
	CPU      string `json:"cpu"`
	CPULimit string `json:"cpu_limit,omitempty"`
	Memory   string `json:"memory"`
	// Claim, when set, is the PersistentVolumeClaim the shards write their
	// results to (--results pvc:CLAIM); else the results come back in the
	// pods' logs.
	Claim string `json:"claim,omitempty"`
	// Args are hail's arguments for every shard (a subcommand, its flags
	// and arguments), with every file they name absolute; the shard's own
	// flags are added to them.
	Args []string `json:"args"`
	// Files are the files the shards read, mounted at the same paths.
	Files []File `json:"files,omitempty"`
	// Duration is the run's length when known (-z), for the Job's deadline.
	Duration time.Duration `json:"duration_ns,omitempty"`
	// ReadyTimeout bounds how long every shard may take to be ready.
	ReadyTimeout time.Duration `json:"ready_timeout_ns"`
	// KeepFor is how long the finished Job and its pods are kept when
	// hail kube does not delete them itself (a detached run); negative:
	// until the Job is deleted (a HailRun kept by its cleanup policy).
	KeepFor time.Duration `json:"keep_for_ns"`
	// Created is when the run was created.
	Created time.Time `json:"created"`
	// Token is what the shards' barriers ask of /start and /stop.
	Token string `json:"token"`
	// Stopped is when hail kube stop stopped it (zero: it was not).
	Stopped time.Time `json:"stopped,omitzero"`
	// Owner, when set, owns the run's Job (a HailRun: deleting it
	// deletes the Job, its pods and the ConfigMap).
	Owner *metav1.OwnerReference `json:"owner,omitempty"`
	// Pod adds to the shards' pods (a HailRun's runner template).
	Pod *PodExtras `json:"pod,omitempty"`
}

// PodExtras are what a HailRun's runner template adds to the shards' pods:
// where they may run, more environment, more volumes.
type PodExtras struct {
	// NodeSelector, Tolerations and Affinity place the pods.
	NodeSelector map[string]string   `json:"nodeSelector,omitempty"`
	Tolerations  []corev1.Toleration `json:"tolerations,omitempty"`
	Affinity     *corev1.Affinity    `json:"affinity,omitempty"`
	// Env is added to the container's environment.
	Env []corev1.EnvVar `json:"env,omitempty"`
	// Volumes are added to the pod, VolumeMounts to the container.
	Volumes      []corev1.Volume      `json:"volumes,omitempty"`
	VolumeMounts []corev1.VolumeMount `json:"volumeMounts,omitempty"`
}

// File is one file the shards read.
type File struct {
	// Path is where it is on this machine, absolute; the shards see it at
	// the same path.
	Path string `json:"path"`
	// Size is its size in bytes.
	Size int64 `json:"size"`
	// Key is its name in the run's ConfigMap, or on the volume.
	Key string `json:"key"`
	// OnVolume says it is shipped on the results volume (the ConfigMap
	// holds at most MaxConfigMapFiles bytes).
	OnVolume bool `json:"on_volume,omitempty"`
}

// MaxConfigMapFiles is how many bytes of files the run's ConfigMap holds
// (Kubernetes takes at most 1 MiB per object); beyond it, files go on the
// results volume.
const MaxConfigMapFiles = 900 << 10

// Names and labels of the run's objects.
const (
	// LabelRun labels every object of a run with its name.
	LabelRun = "hail-run"
	// container is the shard container's name.
	container = "hail"
	// barrierPort is where a shard serves its metrics and start barrier.
	barrierPort = 9090
	// filesPort is where the volume helper pod serves files.
	filesPort = 8080
	// specKey is the Spec's key in the run's ConfigMap.
	specKey = "run.json"
	// resultsDir is where the results volume is mounted.
	resultsDir = "/results"
)

// runName is a run's name: a DNS label short enough for its pods' names.
// Compiled when first used: every hail run links this package.
var runName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,50}[a-z0-9])?$`) })

// DefaultName is a run's name when none is given: hail-YYYYmmdd-HHMMSS.
func DefaultName(now time.Time) string {
	return "hail-" + now.Format("20060102-150405")
}

// Check says what is wrong with the spec, one line naming the setting.
func (s *Spec) Check() error {
	switch {
	case !runName().MatchString(s.Name):
		return fmt.Errorf("--run %q: give a DNS label of at most 52 characters: lowercase letters, digits and '-'", s.Name)
	case s.Shards < 1 || s.Shards > 1000:
		return fmt.Errorf("--shards %d: give a number of shards from 1 to 1000", s.Shards)
	case s.Image == "":
		return fmt.Errorf("--image: give the image with hail (build deploy/Dockerfile)")
	case len(s.Args) == 0:
		return fmt.Errorf("no hail arguments: give them after --, e.g. hail kube run --shards 2 -- -z 30s -q 1000 http://svc:8080/")
	case s.ReadyTimeout <= 0:
		return fmt.Errorf("--ready-timeout %s: give a positive duration", s.ReadyTimeout)
	}
	for _, q := range []struct{ flag, v string }{{"--cpu", s.CPU}, {"--memory", s.Memory}, {"--cpu-limit", s.CPULimit}} {
		if q.v == "" && q.flag == "--cpu-limit" {
			continue
		}
		if _, err := resource.ParseQuantity(q.v); err != nil {
			return fmt.Errorf("%s %q: give a Kubernetes quantity, e.g. 500m or 256Mi", q.flag, q.v)
		}
	}
	if s.Claim != "" && !validName(s.Claim) {
		return fmt.Errorf("--results pvc:%s: the claim's name is not a valid Kubernetes name", s.Claim)
	}
	return nil
}

// validName reports whether n is a DNS subdomain (a claim's name).
func validName(n string) bool {
	return len(n) <= 253 && regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`).MatchString(n)
}

// hint is a kubectl command about the run, with its namespace.
func (s *Spec) hint(args ...string) string {
	return "kubectl -n " + s.Namespace + " " + strings.Join(args, " ")
}

// resultPath is where shard i writes its result on the volume.
func (s *Spec) resultPath(i int) string {
	return fmt.Sprintf("%s/%s.shard-%d.json", resultsDir, s.Name, i)
}

// volumeKey is where file f is staged on the volume, under resultsDir.
func (s *Spec) volumeKey(f File) string {
	return s.Name + ".files/" + f.Key
}

func (s *Spec) marshal() string {
	b, _ := json.MarshalIndent(s, "", "  ")
	return string(b)
}

func unmarshalSpec(data string) (*Spec, error) {
	var s Spec
	if err := json.Unmarshal([]byte(data), &s); err != nil {
		return nil, err
	}
	return &s, nil
}
