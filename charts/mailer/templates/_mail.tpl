{{/* MESSAGING_HTTP_ADDR for "messaging". */}}
{{- define "mailer.httpAddrVar" -}}
{{- printf "%s_HTTP_ADDR" (. | upper | replace "-" "_") }}
{{- end }}

{{/*
A Secret-sourced variable: from the release's Secret, or from the Secret that .ref ({name, key})
names when its name is set. Call with (dict "root" $ "key" "X" "optional" bool "ref" $ref).
*/}}
{{- define "mailer.secretVar" -}}
{{- $ref := .ref | default dict -}}
- name: {{ .key }}
  valueFrom:
    secretKeyRef:
      name: {{ $ref.name | default (include "mailer.secretName" .root) }}
      key: {{ ternary ($ref.key | default .key) .key (not (empty $ref.name)) }}
      {{- if .optional }}
      optional: true
      {{- end }}
{{- end }}

{{/*
The email settings of one service's container (docs/integrators.md "Sending email"): the messaging service
reads the mail settings, the relay, the DKIM keys and the sealing key of sending domains; it and the form service (confirmation
links) sign with TRACKING_SECRET. Call with (dict "root" $ "name" $name "w" $w).
*/}}
{{- define "mailer.mailEnv" -}}
{{- $mail := .root.Values.mail }}
{{- if eq .name "messaging" }}
- name: BOUNCE_DOMAIN
  value: {{ required "mail.bounceDomain is required: the domain of the VERP return paths, whose MX reaches the bounce listener" $mail.bounceDomain | quote }}
- name: MAIL_DELIVERY_CONFIRMATION
  value: {{ $mail.deliveryConfirmation | quote }}
- name: MAIL_ALLOWED_FROM_DOMAINS
  value: {{ join "," $mail.allowedFromDomains | quote }}
- name: MAIL_DOMAIN_VERIFICATION
  value: {{ $mail.domainVerification | quote }}
{{- with $mail.dnsServers }}
- name: DNS_SERVERS
  value: {{ join "," . | quote }}
{{- end }}
- name: SMTP_POOL_SIZE
  value: {{ $mail.smtpPoolSize | quote }}
- name: MAIL_SEND_CONCURRENCY
  value: {{ $mail.sendConcurrency | quote }}
- name: MAIL_ACCOUNT_RATE_PER_SECOND
  value: {{ $mail.accountRatePerSecond | quote }}
{{- with .w.bounceSmtp }}
- name: BOUNCE_SMTP_HOST
  value: "0.0.0.0"
- name: BOUNCE_SMTP_PORT
  value: {{ .port | quote }}
{{- end }}
{{- include "mailer.secretVar" (dict "root" .root "key" "SMTP_URL" "ref" .root.Values.secrets.smtpSecret) | nindent 0 }}
{{- include "mailer.secretVar" (dict "root" .root "key" "DKIM_KEYS" "optional" (empty .root.Values.secrets.dkimSecret.name) "ref" .root.Values.secrets.dkimSecret) | nindent 0 }}
{{- /* Optional in the pod spec so an existingSecret without it starts with domainVerification off; with required the service refuses to start without it, saying so. */}}
{{- include "mailer.secretVar" (dict "root" .root "key" "SECRET_SEALING_KEY" "optional" true) | nindent 0 }}
{{- /* During a rotation: DKIM keys sealed under a former key still sign until reseal-secrets re-sealed them. */}}
{{- include "mailer.secretVar" (dict "root" .root "key" "SECRET_SEALING_KEY_PREVIOUS" "optional" true) | nindent 0 }}
{{- end }}
{{- if has .name (list "messaging" "form") }}
{{- include "mailer.secretVar" (dict "root" .root "key" "TRACKING_SECRET") | nindent 0 }}
{{- include "mailer.secretVar" (dict "root" .root "key" "TRACKING_SECRET_PREVIOUS" "optional" true) | nindent 0 }}
{{- end }}
{{- end }}

{{/*
The retention settings of one service's container (values.retention, README "Retention").
Call with (dict "root" $ "name" $name).
*/}}
{{- define "mailer.retentionEnv" -}}
{{- $r := .root.Values.retention }}
{{- if eq .name "messaging" }}
- name: MESSAGE_RETENTION_DAYS
  value: {{ $r.messageDays | quote }}
- name: EVENT_RETENTION_DAYS
  value: {{ $r.eventDays | quote }}
- name: REPORT_RETENTION_DAYS
  value: {{ $r.reportDays | quote }}
- name: RUN_RETENTION_DAYS
  value: {{ $r.runDays | quote }}
{{- else if eq .name "webhook" }}
- name: WEBHOOK_DELIVERY_RETENTION_DAYS
  value: {{ $r.webhookDeliveryDays | quote }}
{{- else if eq .name "form" }}
- name: FORM_SUBMISSION_RETENTION_DAYS
  value: {{ $r.formSubmissionDays | quote }}
{{- end }}
{{- end }}
