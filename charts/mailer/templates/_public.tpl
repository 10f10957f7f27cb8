{{- /*
The public entry (ingress.yaml, httproute.yaml): readers follow links that start with PUBLIC_BASE_URL,
so that address, the hosts routed to the gateway and the gateway's trust in its proxies must agree.
*/ -}}

{{/*
PUBLIC_BASE_URL: mail.publicBaseUrl without a trailing slash; empty, with the Ingress enabled and
hosts given, https://<first host> (http:// when the Ingress does not terminate TLS).
*/}}
{{- define "mailer.publicBaseUrl" -}}
{{- $ingress := .Values.ingress }}
{{- $given := .Values.mail.publicBaseUrl | trimSuffix "/" }}
{{- if and (not $given) $ingress.enabled $ingress.hosts }}
{{- printf "%s://%s" (ternary "https" "http" $ingress.tls.enabled) (first $ingress.hosts) }}
{{- else }}
{{- $given }}
{{- end }}
{{- end }}

{{/*
The hosts an Ingress or HTTPRoute sends to the gateway, as JSON (a list): the given ones, else the host
of PUBLIC_BASE_URL. Fails when they and PUBLIC_BASE_URL disagree, or when the gateway would not
believe the proxy in front of it. Call with (dict "root" $ "hosts" $given "what" "ingress.hosts" "entry" "the Ingress").
*/}}
{{- define "mailer.publicHosts" -}}
{{- $v := .root.Values }}
{{- if not $v.gateway.enabled }}
{{- fail (printf "%s routes to the gateway: gateway.enabled must be true" .entry) }}
{{- end }}
{{- if lt (int $v.gateway.trustProxy) 1 }}
{{- fail (printf "gateway.trustProxy is 0 while %s puts a proxy in front of the gateway: set it to the proxy hops (1 for the proxy alone, one more per load balancer in front of it), or client addresses (rate limits) and https (HSTS) are wrong" .entry) }}
{{- end }}
{{- $base := include "mailer.publicBaseUrl" .root }}
{{- if not $base }}
{{- fail (printf "mail.publicBaseUrl (or %s) is required: every link in mail and reader pages starts with the public address" .what) }}
{{- end }}
{{- $url := urlParse $base }}
{{- if or (contains ":" $url.host) (not (eq (trimSuffix "/" $url.path) "")) }}
{{- fail (printf "mail.publicBaseUrl %s must be the root of a host without a port (e.g. https://mail.example.com): %s routes whole hosts on the default ports, without rewriting paths" $base .entry) }}
{{- end }}
{{- $hosts := .hosts | default (list $url.host) }}
{{- if not (has $url.host $hosts) }}
{{- fail (printf "%s %s does not include %s, the host of mail.publicBaseUrl: the links in mail would lead nowhere" .what (join ", " $hosts) $url.host) }}
{{- end }}
{{- toJson $hosts }}
{{- end }}
