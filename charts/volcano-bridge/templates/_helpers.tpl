{{- define "vbridge.name" -}}{{ .Release.Name }}{{- end -}}

{{- define "vbridge.labels" -}}
app.kubernetes.io/name: volcano-bridge
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | quote }}
{{- end -}}

{{/* Selector labels of one component: (dict "root" $ "component" "webhook") */}}
{{- define "vbridge.selector" -}}
app.kubernetes.io/name: volcano-bridge
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "vbridge.componentLabels" -}}
{{ include "vbridge.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "vbridge.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{/* The Secret holding the webhook's serving certificate (tls.crt, tls.key), in every mode. */}}
{{- define "vbridge.certSecret" -}}
{{ .Values.certificates.secretName | default (printf "%s-webhook-tls" (include "vbridge.name" .)) }}
{{- end -}}

{{/* certificates.mode=secret: the base64 CA bundle, or a refusal to render. */}}
{{- define "vbridge.caBundle" -}}
{{- $ca := .Values.certificates.caBundle | trim -}}
{{- if not $ca -}}
{{- fail "certificates.mode=secret needs certificates.caBundle: the PEM CA certificate that signed the serving certificate in the Secret certificates.secretName (without it every admission request would fail with an x509 error). Set it (--set-file certificates.caBundle=ca.crt), or use certificates.mode=self (the bridge makes and rotates its own) or certificates.mode=cert-manager." -}}
{{- end -}}
{{- if not (contains "-----BEGIN CERTIFICATE-----" $ca) -}}
{{- fail "certificates.caBundle must be a PEM certificate (-----BEGIN CERTIFICATE-----...), not base64 or a file name: pass the file with --set-file certificates.caBundle=ca.crt" -}}
{{- end -}}
{{- .Values.certificates.caBundle | b64enc | quote -}}
{{- end -}}

{{/* Pod Security Standards "restricted", pod level. */}}
{{- define "vbridge.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: {{ .Values.securityContext.runAsUser }}
runAsGroup: {{ .Values.securityContext.runAsGroup }}
fsGroup: {{ .Values.securityContext.runAsGroup }}
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* Pod Security Standards "restricted", container level. */}}
{{- define "vbridge.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
capabilities:
  drop: [ALL]
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* Placement and the shared pod fields of one component: (dict "root" $ "component" "webhook" "values" .Values.webhook) */}}
{{- define "vbridge.podPlacement" -}}
serviceAccountName: {{ include "vbridge.name" .root }}-{{ .component }}
automountServiceAccountToken: true
enableServiceLinks: false
{{- with .root.Values.imagePullSecrets }}
imagePullSecrets: {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- with .values.nodeSelector }}
nodeSelector: {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.tolerations }}
tolerations: {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.affinity }}
affinity: {{- toYaml . | nindent 2 }}
{{- end }}
topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: kubernetes.io/hostname
    whenUnsatisfiable: ScheduleAnyway
    labelSelector:
      matchLabels: {{- include "vbridge.selector" . | nindent 8 }}
securityContext: {{- include "vbridge.podSecurityContext" .root | nindent 2 }}
{{- end -}}

{{/* The container fields every component shares. */}}
{{- define "vbridge.containerCommon" -}}
image: {{ include "vbridge.image" .root | quote }}
imagePullPolicy: {{ .root.Values.image.pullPolicy }}
env:
  - name: POD_NAMESPACE
    valueFrom: {fieldRef: {fieldPath: metadata.namespace}}
  - name: POD_NAME
    valueFrom: {fieldRef: {fieldPath: metadata.name}}
securityContext: {{- include "vbridge.containerSecurityContext" .root | nindent 2 }}
resources: {{- toYaml .values.resources | nindent 2 }}
{{- end -}}

{{/* RBAC subject: the component's own ServiceAccount. */}}
{{- define "vbridge.subject" -}}
- kind: ServiceAccount
  name: {{ include "vbridge.name" .root }}-{{ .component }}
  namespace: {{ .root.Release.Namespace }}
{{- end -}}

{{- /* The backend the components run: .Values.backend, with "auto" resolved here to native when the
cluster serves scheduling.k8s.io/v1beta1 Workload (the GenericWorkload gate), else volcano. */ -}}
{{- define "vbridge.backend" -}}
{{- if eq .Values.backend "auto" -}}
{{- if .Capabilities.APIVersions.Has "scheduling.k8s.io/v1beta1/Workload" }}native{{ else }}volcano{{ end -}}
{{- else -}}
{{ .Values.backend }}
{{- end -}}
{{- end -}}
