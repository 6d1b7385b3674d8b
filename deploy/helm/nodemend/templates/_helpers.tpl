{{/* Labels every object carries; selectors use only app.kubernetes.io/name (as deploy/ does). */}}
{{- define "nodemend.labels" -}}
app.kubernetes.io/name: {{ .name }}
app.kubernetes.io/part-of: nodemend
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version }}
{{- end }}

{{- define "nodemend.agentNamespace" -}}
{{ .Values.agent.namespace | default .Release.Namespace }}
{{- end }}

{{- define "nodemend.controllerNamespace" -}}
{{ .Values.controller.namespace | default .Release.Namespace }}
{{- end }}

{{/* image: repository:tag, the tag defaulting to the chart's appVersion. Args: the component's image values, root. */}}
{{- define "nodemend.image" -}}
{{ .image.repository }}:{{ .image.tag | default .root.Chart.AppVersion }}
{{- end }}

{{/*
The controller's config file: controller.config plus the knobs that are values of their own. The namespace
is always the one the controller runs in, since its Role grants Leases and ConfigMaps only there.
*/}}
{{- define "nodemend.controllerConfig" -}}
{{- $c := .Values.controller -}}
{{- $cfg := deepCopy $c.config -}}
{{- $_ := set $cfg "cloudProvider" $c.cloudProvider -}}
{{- $_ := set $cfg "namespace" (include "nodemend.controllerNamespace" .) -}}
{{- $_ := set $cfg "dryRun" $c.dryRun -}}
{{- $_ := set $cfg "maxUnhealthyPercent" $c.maxUnhealthyPercent -}}
{{- $_ := set $cfg "leaderElection" $c.leaderElection -}}
{{- $_ := set $cfg "server" (dict "port" $c.port) -}}
{{- $_ := set $cfg "aws" $c.aws -}}
{{- if $c.kwok }}{{ $_ := set $cfg "kwok" $c.kwok }}{{ end -}}
{{- toYaml $cfg -}}
{{- end }}

{{/*
"true" when the controller's config lets a repair force its drain (delete the pods still there at the drain
deadline), "" when every drain waits: drain.onDeadline (default force), then every policy's and every reason
override's drainMode, which beat it (packages/repair-controller/src/decide/policyMatch.ts). Decides whether the
controller's ClusterRole grants pods delete.
*/}}
{{- define "nodemend.controllerForcesDrains" -}}
{{- $cfg := .Values.controller.config | default dict -}}
{{- $drain := $cfg.drain | default dict -}}
{{- $force := ne ($drain.onDeadline | default "force") "wait" -}}
{{- range ($cfg.policies | default list) }}{{ if eq (.drainMode | default "") "force" }}{{ $force = true }}{{ end }}{{ end -}}
{{- range $_, $knobs := ($cfg.reasons | default dict) }}{{ if eq (($knobs | default dict).drainMode | default "") "force" }}{{ $force = true }}{{ end }}{{ end -}}
{{- if $force }}true{{ end -}}
{{- end }}

{{/*
A NetworkPolicy's ingress: the named container port, from networkPolicy.metricsFrom only. No peers renders
`ingress: []` (no pod may connect), never a rule with an empty `from`, which would let every source in.
Args: port (the container port's name), root.
*/}}
{{- define "nodemend.metricsIngress" -}}
{{- with .root.Values.networkPolicy.metricsFrom -}}
ingress:
  - from:
      {{- toYaml . | nindent 6 }}
    ports:
      - { port: {{ $.port }}, protocol: TCP }
{{- else -}}
ingress: []
{{- end }}
{{- end }}
