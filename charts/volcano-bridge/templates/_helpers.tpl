{{- define "vbridge.name" -}}{{ .Release.Name }}{{- end -}}
{{- define "vbridge.labels" -}}
app.kubernetes.io/name: volcano-bridge
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end -}}
