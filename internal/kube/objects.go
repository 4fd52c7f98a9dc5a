package kube

import (
	"fmt"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/hail-loadgen/hail/internal/barrier"
)

// uid is the user every pod runs as: distroless's nonroot, as the image.
const uid = 65532

// labels are the labels of every object of run s.
func (s *Spec) labels() map[string]string {
	return map[string]string{"app.kubernetes.io/name": "hail", "app.kubernetes.io/managed-by": "hail-kube", LabelRun: s.Name}
}

// ConfigMap is the run's ConfigMap: its Spec, and the files that fit
// (data maps a File's Key to its bytes).
func (s *Spec) ConfigMap(data map[string][]byte) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: s.Namespace, Labels: s.labels()},
		Data:       map[string]string{specKey: s.marshal()},
	}
	for _, f := range s.Files {
		if !f.OnVolume {
			if cm.BinaryData == nil {
				cm.BinaryData = map[string][]byte{}
			}
			cm.BinaryData[f.Key] = data[f.Key]
		}
	}
	return cm
}

// restricted is the security context of every container: what the
// restricted Pod Security Standard asks.
func restricted() *corev1.SecurityContext {
	return &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
		Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}
}

// podSecurity is the pod-level security context of every pod.
func podSecurity() *corev1.PodSecurityContext {
	return &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](uid), RunAsGroup: ptr.To[int64](uid),
		FSGroup: ptr.To[int64](uid), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
}

// shardArgs are the arguments of shard $(JOB_COMPLETION_INDEX): hail's, a
// "$" doubled so Kubernetes passes it on as written, then the shard's own.
func (s *Spec) shardArgs() []string {
	out := make([]string, 0, len(s.Args)+6)
	for _, a := range s.Args {
		out = append(out, strings.ReplaceAll(a, "$", "$$"))
	}
	out = append(out, fmt.Sprintf("--shard=$(JOB_COMPLETION_INDEX)/%d", s.Shards), "--start-at=barrier",
		fmt.Sprintf("--metrics-addr=0.0.0.0:%d", barrierPort), "--no-tui", "--output-format=json")
	if s.Claim != "" {
		out = append(out, "--output="+strings.Replace(s.resultPath(0), "shard-0.", "shard-$(JOB_COMPLETION_INDEX).", 1))
	}
	return out
}

// mounts are the shard container's volume mounts: each file at its own
// path, and the results volume.
func (s *Spec) mounts() []corev1.VolumeMount {
	var m []corev1.VolumeMount
	for _, f := range s.Files {
		if f.OnVolume {
			m = append(m, corev1.VolumeMount{Name: "results", MountPath: f.Path, SubPath: s.volumeKey(f), ReadOnly: true})
		} else {
			m = append(m, corev1.VolumeMount{Name: "files", MountPath: f.Path, SubPath: f.Key, ReadOnly: true})
		}
	}
	if s.Claim != "" {
		m = append(m, corev1.VolumeMount{Name: "results", MountPath: resultsDir})
	}
	return m
}

func (s *Spec) volumes() []corev1.Volume {
	var v []corev1.Volume
	for _, f := range s.Files {
		if !f.OnVolume {
			v = append(v, corev1.Volume{Name: "files", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: s.Name}}}})
			break
		}
	}
	if s.Claim != "" {
		v = append(v, corev1.Volume{Name: "results", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: s.Claim}}})
	}
	return v
}

// Job is the shards' Indexed Job: N pods at once, each
// `hail ARGS --shard I/N --start-at barrier`, none re-run
// (backoffLimitPerIndex 0: a failed or deleted shard's share would start
// late), the others going on when one fails.
func (s *Spec) Job() *batchv1.Job {
	res := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(s.CPU), corev1.ResourceMemory: resource.MustParse(s.Memory)},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(s.Memory)},
	}
	if s.CPULimit != "" {
		res.Limits[corev1.ResourceCPU] = resource.MustParse(s.CPULimit)
	}
	job := &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: s.Namespace, Labels: s.labels()},
		Spec: batchv1.JobSpec{
			CompletionMode:       ptr.To(batchv1.IndexedCompletion),
			Completions:          ptr.To(int32(s.Shards)),
			Parallelism:          ptr.To(int32(s.Shards)),
			BackoffLimitPerIndex: ptr.To(int32(0)),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: s.labels()},
				Spec: corev1.PodSpec{
					RestartPolicy:                 corev1.RestartPolicyNever,
					AutomountServiceAccountToken:  ptr.To(false),
					EnableServiceLinks:            ptr.To(false),
					TerminationGracePeriodSeconds: ptr.To[int64](45), // hail settles in-flight requests (-w waits at most 30 s)
					SecurityContext:               podSecurity(),
					// One shard per node where there are enough nodes, so
					// shards do not share CPUs (hail merge counts a shared
					// node's cores once).
					TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "kubernetes.io/hostname",
						WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{LabelRun: s.Name}}}},
					Containers: []corev1.Container{{
						Name:            container,
						Image:           s.Image,
						ImagePullPolicy: corev1.PullIfNotPresent,
						Args:            s.shardArgs(),
						Env: []corev1.EnvVar{
							{Name: "JOB_COMPLETION_INDEX", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{
								FieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}},
							{Name: "GOMEMLIMIT", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.memory"}}},
							{Name: barrier.TokenEnv, Value: s.Token},
						},
						Ports:                    []corev1.ContainerPort{{Name: "metrics", ContainerPort: barrierPort}},
						Resources:                res,
						SecurityContext:          restricted(),
						VolumeMounts:             s.mounts(),
						TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
					}},
					Volumes: s.volumes(),
				},
			},
		},
	}
	if s.KeepFor >= 0 {
		job.Spec.TTLSecondsAfterFinished = ptr.To(int32(s.KeepFor.Seconds()))
	}
	if s.Owner != nil {
		job.OwnerReferences = []metav1.OwnerReference{*s.Owner}
	}
	if x := s.Pod; x != nil {
		ps := &job.Spec.Template.Spec
		ps.NodeSelector, ps.Tolerations, ps.Affinity = x.NodeSelector, x.Tolerations, x.Affinity
		ps.Volumes = append(ps.Volumes, x.Volumes...)
		c := &ps.Containers[0]
		c.Env = append(c.Env, x.Env...)
		c.VolumeMounts = append(c.VolumeMounts, x.VolumeMounts...)
	}
	if s.Duration > 0 { // a hung run ends: the barrier, the run, and room to settle
		job.Spec.ActiveDeadlineSeconds = ptr.To(int64((s.ReadyTimeout + s.Duration).Seconds()) + 600)
	}
	return job
}

// FilesPod is the volume helper of a run with a results volume: hail
// itself (`hail kube files`), serving the volume's files of the run
// through the API server's pod proxy, to stage files larger than a
// ConfigMap before the run and to fetch the results after it. It ends
// itself after idle minutes of nothing asked.
func (s *Spec) FilesPod(token string) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: s.Name + "-files", Namespace: s.Namespace, Labels: s.labels()},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			AutomountServiceAccountToken:  ptr.To(false),
			EnableServiceLinks:            ptr.To(false),
			TerminationGracePeriodSeconds: ptr.To[int64](5),
			ActiveDeadlineSeconds:         ptr.To[int64](3600),
			SecurityContext:               podSecurity(),
			Containers: []corev1.Container{{
				Name:            "files",
				Image:           s.Image,
				ImagePullPolicy: corev1.PullIfNotPresent,
				Args:            []string{"kube", "files", "--dir=" + resultsDir, "--prefix=" + s.Name + ".", "--addr=0.0.0.0:" + strconv.Itoa(filesPort)},
				Env:             []corev1.EnvVar{{Name: TokenEnv, Value: token}},
				Ports:           []corev1.ContainerPort{{Name: "files", ContainerPort: filesPort}},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(filesPort)}},
					PeriodSeconds: 1},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("32Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")},
				},
				SecurityContext: restricted(),
				VolumeMounts:    []corev1.VolumeMount{{Name: "results", MountPath: resultsDir}},
			}},
			Volumes: []corev1.Volume{{Name: "results", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: s.Claim}}}},
		},
	}
}
