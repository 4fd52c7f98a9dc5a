package kube

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// HailRunGroup is the HailRun custom resource's API group and version
// (deploy/helm/hail-operator/crds/hailruns.yaml defines it).
var HailRunGroup = schema.GroupVersion{Group: "hail-loadgen.github.io", Version: "v1alpha1"}

// HailRuns are the HailRun custom resources: distributed runs as
// Kubernetes objects, run by hail operator.
var HailRuns = HailRunGroup.WithResource("hailruns")

// HailRun is one distributed run declared as an object: hail operator
// validates it, runs it as hail kube run does (an Indexed Job, the start
// barrier, every shard's end named), merges its shards' results and
// writes the merged summary and verdict in its status.
type HailRun struct {
	metav1.TypeMeta `json:",inline"`
	// ObjectMeta is the object's metadata.
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec is the run asked for.
	Spec HailRunSpec `json:"spec"`
	// Status is what the operator made of it.
	Status HailRunStatus `json:"status,omitempty"`
}

// HailRunSpec is the run: what hail kube run's flags and arguments say.
type HailRunSpec struct {
	// Shards is how many shards (pods) share the run, all at once.
	Shards int `json:"shards"`
	// Args are hail's arguments for the whole run, as after hail kube
	// run's --: load flags and a URL, grpc …, or (with Scenario) flags
	// for hail run. Paths in them are the pods' paths.
	Args []string `json:"args,omitempty"`
	// Scenario, when set, is the scenario file to run, from a ConfigMap.
	Scenario *ScenarioSource `json:"scenario,omitempty"`
	// Image is the image with hail (default: the operator's --image).
	Image string `json:"image,omitempty"`
	// Runner is what each shard's pod gets.
	Runner RunnerTemplate `json:"runner,omitempty"`
	// Results says where the shards' results go (default: their logs,
	// the merged result in a ConfigMap and the status).
	Results ResultsSink `json:"results,omitempty"`
	// Cleanup is what happens to the Job, its pods and the run's
	// ConfigMap once merged: Delete (default) or Keep (until the HailRun
	// is deleted).
	Cleanup string `json:"cleanup,omitempty"`
	// ReadyTimeout bounds how long every shard may take to be scheduled,
	// pulled, started and ready at the barrier (default 3m).
	ReadyTimeout *metav1.Duration `json:"readyTimeout,omitempty"`
	// Thresholds are pass/fail checks on the merged result (scenario
	// threshold syntax: "p99 < 200ms", "error_rate < 1%").
	Thresholds []string `json:"thresholds,omitempty"`
}

// ScenarioSource is a scenario file in a ConfigMap: every key of it is
// mounted as a file in /hail/scenario/ in the shards (feeds and bodies
// beside the scenario).
type ScenarioSource struct {
	// ConfigMap is the ConfigMap's name, in the HailRun's namespace.
	ConfigMap string `json:"configMap"`
	// File is the scenario's key in it.
	File string `json:"file"`
}

// ScenarioDir is where a HailRun's scenario ConfigMap is mounted.
const ScenarioDir = "/hail/scenario"

// RunnerTemplate is what each shard's pod gets.
type RunnerTemplate struct {
	// Resources: requests.cpu (default 500m), requests.memory or
	// limits.memory (default 256Mi; the limit, and hail's GOMEMLIMIT),
	// limits.cpu (none by default: a limit throttles the generator).
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`
	// NodeSelector, Tolerations and Affinity place the pods.
	NodeSelector map[string]string   `json:"nodeSelector,omitempty"`
	Tolerations  []corev1.Toleration `json:"tolerations,omitempty"`
	Affinity     *corev1.Affinity    `json:"affinity,omitempty"`
	// Env is added to the shard container's environment.
	Env []corev1.EnvVar `json:"env,omitempty"`
	// Volumes are added to the pod, VolumeMounts to the container (the
	// restricted Pod Security Standard allows ConfigMap, Secret,
	// emptyDir, projected, ephemeral and claim volumes).
	Volumes      []corev1.Volume      `json:"volumes,omitempty"`
	VolumeMounts []corev1.VolumeMount `json:"volumeMounts,omitempty"`
}

// ResultsSink is where results go.
type ResultsSink struct {
	// Claim, when set, is a PersistentVolumeClaim in the namespace the
	// shards write their results to (as hail kube run --results
	// pvc:CLAIM); the merged result is written there too, as
	// NAME.total.json. Else the results come back in the pods' logs.
	Claim string `json:"claim,omitempty"`
}

// Cleanup policies.
const (
	CleanupDelete = "Delete"
	CleanupKeep   = "Keep"
)

// HailRunStatus is the run as the operator saw it.
type HailRunStatus struct {
	// ObservedGeneration is the spec's generation the status is of.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Phase is one of Validating, Waiting, Running, Merging, Succeeded,
	// Failed.
	Phase string `json:"phase,omitempty"`
	// Message says in one line why the run is in its phase (why it
	// failed, what it waits for).
	Message string `json:"message,omitempty"`
	// Job is the shards' Indexed Job's name.
	Job string `json:"job,omitempty"`
	// Shards are the shards' states: while the run goes on, as their pods
	// say; once merged, as the merge says.
	Shards []ShardStatus `json:"shards,omitempty"`
	// Summary is the merged result's summary.
	Summary *RunSummary `json:"summary,omitempty"`
	// Verdict is the merged bottleneck verdict.
	Verdict *RunVerdict `json:"verdict,omitempty"`
	// Incomplete are the merge's lines when the run is incomplete.
	Incomplete []string `json:"incomplete,omitempty"`
	// Thresholds are the checks of spec.thresholds on the merged result.
	Thresholds []ThresholdStatus `json:"thresholds,omitempty"`
	// Result says where the full merged result is.
	Result *ResultRef `json:"result,omitempty"`
	// StartTime is the shards' agreed start; CompletionTime when the run
	// was merged or failed.
	StartTime      *metav1.Time `json:"startTime,omitempty"`
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// Conditions: Validated, Started, Merged, ThresholdsPassed.
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Phases of a HailRun.
const (
	PhaseValidating = "Validating"
	PhaseWaiting    = "Waiting"
	PhaseRunning    = "Running"
	PhaseMerging    = "Merging"
	PhaseSucceeded  = "Succeeded"
	PhaseFailed     = "Failed"
)

// ShardStatus is one shard's state.
type ShardStatus struct {
	// Index is the shard's index, from 0.
	Index int `json:"index"`
	// Pod is its pod's name.
	Pod string `json:"pod,omitempty"`
	// State is Pending, Running, Complete, Late, Interrupted, Failed or
	// Missing.
	State string `json:"state"`
	// Reason says why it is not plainly complete (the cluster's words).
	Reason string `json:"reason,omitempty"`
	// Requests are the requests of its result that were merged.
	Requests int64 `json:"requests,omitempty"`
}

// Shard states.
const (
	ShardPending     = "Pending"
	ShardRunning     = "Running"
	ShardComplete    = "Complete"
	ShardLate        = "Late"
	ShardInterrupted = "Interrupted"
	ShardFailed      = "Failed"
	ShardMissing     = "Missing"
)

// RunSummary is the merged result's summary: exact counts, and the
// figures recomputed from the merged histograms.
type RunSummary struct {
	// Requests, Responses and Errors are exact counts over every shard.
	Requests  int64 `json:"requests"`
	Responses int64 `json:"responses"`
	Errors    int64 `json:"errors"`
	// SuccessRate is the share of requests answered, in percent ("99.98%").
	SuccessRate string `json:"successRate"`
	// RequestsPerSecond over the run ("1999.6").
	RequestsPerSecond string `json:"requestsPerSecond"`
	// P50, P99 and Max latency ("1.2ms").
	P50 string `json:"p50"`
	P99 string `json:"p99"`
	Max string `json:"max"`
	// Seconds is the run's length.
	Seconds string `json:"seconds"`
}

// RunVerdict is the merged verdict: what limited the run.
type RunVerdict struct {
	// Bottleneck is none, target, generator, other-processes or
	// timer-wakeup.
	Bottleneck string `json:"bottleneck"`
	// Reasons are its evidence.
	Reasons []string `json:"reasons,omitempty"`
}

// ThresholdStatus is one threshold's outcome.
type ThresholdStatus struct {
	// Expr is the threshold as written.
	Expr string `json:"expr"`
	// Measured is the merged result's value.
	Measured string `json:"measured"`
	// Pass says it held.
	Pass bool `json:"pass"`
}

// ResultRef says where the full merged result (hail's JSON) is.
type ResultRef struct {
	// ConfigMap holds it gzipped, key total.json.gz (read it with kubectl
	// get cm NAME -o jsonpath='{.binaryData.total\.json\.gz}' | base64 -d
	// | gunzip).
	ConfigMap string `json:"configMap,omitempty"`
	// Claim and Path: it is on the results claim too.
	Claim string `json:"claim,omitempty"`
	Path  string `json:"path,omitempty"`
}

// HailRunList is a list of HailRuns.
type HailRunList struct {
	metav1.TypeMeta `json:",inline"`
	// ListMeta is the list's metadata.
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the HailRuns.
	Items []HailRun `json:"items"`
}

// DeepCopyObject implements runtime.Object. Through JSON, which these
// types round-trip exactly: no generated code for a type the operator
// copies a few times per run.
func (h *HailRun) DeepCopyObject() runtime.Object { return deepCopy(h) }

// DeepCopyObject implements runtime.Object.
func (l *HailRunList) DeepCopyObject() runtime.Object { return deepCopy(l) }

func deepCopy[T any](in *T) *T {
	if in == nil {
		return nil
	}
	b, err := json.Marshal(in)
	if err != nil {
		panic("kube: copying a " + err.Error())
	}
	out := new(T)
	if err := json.Unmarshal(b, out); err != nil {
		panic("kube: copying a " + err.Error())
	}
	return out
}

// addHailRuns registers the HailRun types (the custom group travels as
// JSON).
func addHailRuns(s *runtime.Scheme) error {
	s.AddKnownTypes(HailRunGroup, &HailRun{}, &HailRunList{})
	metav1.AddToGroupVersion(s, HailRunGroup)
	return nil
}
