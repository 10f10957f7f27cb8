{{/* Chart name, overridable. */}}
{{- define "mailer.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Prefix of every resource name: the release name, plus the chart name unless the release name
already contains it ("mailer" -> mailer-subscriber, "prod" -> prod-mailer-subscriber).
Capped at 42 characters so that "<prefix>-<workload>-admin" stays a valid DNS label.
*/}}
{{- define "mailer.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 42 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 42 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 42 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "mailer.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels of every object. */}}
{{- define "mailer.labels" -}}
helm.sh/chart: {{ include "mailer.chart" . }}
app.kubernetes.io/name: {{ include "mailer.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: {{ include "mailer.name" . }}
{{- end }}

{{/* Labels every pod of this release carries: what the NetworkPolicies call "the release". */}}
{{- define "mailer.releaseSelectorLabels" -}}
app.kubernetes.io/name: {{ include "mailer.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* Selector of one workload's pods. Call with (dict "root" $ "name" $name). */}}
{{- define "mailer.selectorLabels" -}}
{{ include "mailer.releaseSelectorLabels" .root }}
app.kubernetes.io/component: {{ .name }}
{{- end }}

{{/* All labels of one workload's objects. Call with (dict "root" $ "name" $name). */}}
{{- define "mailer.workloadLabels" -}}
{{ include "mailer.labels" .root }}
app.kubernetes.io/component: {{ .name }}
{{- end }}

{{/* Name of one workload's Deployment and Service. Call with (dict "root" $ "name" $name). */}}
{{- define "mailer.workloadName" -}}
{{- printf "%s-%s" (include "mailer.fullname" .root) .name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Collects the enabled workloads into .out (a dict: name -> values), the gateway under "gateway".
Helm templates can only return strings, so the caller passes the dict to fill:
  {{- $workloads := dict }}{{- include "mailer.collectWorkloads" (dict "root" . "out" $workloads) }}
*/}}
{{- define "mailer.collectWorkloads" -}}
{{- if .root.Values.gateway.enabled }}
{{- $_ := set .out "gateway" .root.Values.gateway }}
{{- end }}
{{- range $name, $svc := .root.Values.services }}
{{- if $svc.enabled }}
{{- $_ := set $.out $name $svc }}
{{- end }}
{{- end }}
{{- end }}

{{/* SUBSCRIBER_GRPC_ADDR for "subscriber". */}}
{{- define "mailer.grpcAddrVar" -}}
{{- printf "%s_GRPC_ADDR" (. | upper | replace "-" "_") }}
{{- end }}

{{/* Image reference of one workload. Call with (dict "root" $ "w" $workloadValues). */}}
{{- define "mailer.image" -}}
{{- $registry := .root.Values.image.registry | trimSuffix "/" }}
{{- $tag := .w.image.tag | default .root.Values.image.tag | default .root.Chart.AppVersion }}
{{- if $registry }}{{ $registry }}/{{ end }}{{ .w.image.repository }}:{{ $tag }}
{{- end }}

{{/* Name of the Secret the pods read (created by the chart unless existingSecret). */}}
{{- define "mailer.secretName" -}}
{{- .Values.secrets.existingSecret | default (include "mailer.fullname" .) }}
{{- end }}

{{- define "mailer.configMapName" -}}
{{- include "mailer.fullname" . }}
{{- end }}

{{- define "mailer.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- .Values.serviceAccount.name | default (include "mailer.fullname" .) }}
{{- else }}
{{- .Values.serviceAccount.name | default "default" }}
{{- end }}
{{- end }}

{{/* OTEL_RESOURCE_ATTRIBUTES; $(VAR) refers to the downward-API variables defined before it. */}}
{{- define "mailer.otelResourceAttributes" -}}
{{- $attrs := list "service.namespace=mailer" "k8s.namespace.name=$(K8S_NAMESPACE_NAME)" "k8s.pod.name=$(K8S_POD_NAME)" }}
{{- range $k, $v := .Values.otel.resourceAttributes }}
{{- $attrs = append $attrs (printf "%s=%s" $k $v) }}
{{- end }}
{{- join "," $attrs }}
{{- end }}

{{/*
A MongoDB URI, checked: with mongodb.requireReplicaSet it must name a replica set (values.yaml says
why). The message names the value, never the URI (it holds a password). Call with
(dict "root" $ "uri" $uri "what" "secrets.mongodbUri").
*/}}
{{- define "mailer.checkedMongodbUri" -}}
{{- if and .root.Values.mongodb.requireReplicaSet (not (hasPrefix "mongodb+srv://" .uri)) (not (regexMatch "[?&]replicaSet=[^&]+" .uri)) }}
{{- fail (printf "%s names no replica set (replicaSet=<name>, or a mongodb+srv:// URI): every service writes in transactions, which a standalone MongoDB refuses. For the mongos routers of a sharded cluster set mongodb.requireReplicaSet=false" .what) }}
{{- end }}
{{- .uri }}
{{- end }}
