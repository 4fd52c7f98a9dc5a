{{- define "hail-operator.labels" -}}
app.kubernetes.io/name: hail-operator
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}

{{- define "hail-operator.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag }}
{{- end }}

{{/* What the operator does in a namespace it runs HailRuns in. */}}
{{- define "hail-operator.rules" -}}
- apiGroups: [hail-loadgen.github.io]
  resources: [hailruns]
  verbs: [get, list, watch]
- apiGroups: [hail-loadgen.github.io]
  resources: [hailruns/status]
  verbs: [get, update]
- apiGroups: [hail-loadgen.github.io]
  resources: [hailruns/finalizers]
  verbs: [update]
- apiGroups: [batch]
  resources: [jobs]
  verbs: [create, get, list, watch, delete]
- apiGroups: [""]
  resources: [pods]
  verbs: [get, list, watch, create, delete]
- apiGroups: [""]
  resources: [pods/log]
  verbs: [get]
- apiGroups: [""]
  resources: [pods/proxy]
  verbs: [get, create]
- apiGroups: [""]
  resources: [configmaps]
  verbs: [create, get, update, delete]
- apiGroups: [""]
  resources: [events]
  verbs: [list, watch]
- apiGroups: [""]
  resources: [persistentvolumeclaims]
  verbs: [get]
{{- end }}
