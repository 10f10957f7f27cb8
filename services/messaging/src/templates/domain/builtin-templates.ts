// The system's own templates (SendEmailMessageRequest.builtin_template), for mail the services send
// themselves when the customer named no template of theirs. Rendered by the same engine as customer
// templates: every value in the html part is escaped on output, so a form name like
// `<script>` arrives as text.
import { compileTemplate, type CompiledTemplate } from '@mailer/templates';

export type BuiltinTemplateName = 'FORM_CONFIRMATION';

export interface BuiltinTemplate {
  /** The message record's templateName stays null: no customer template of this name exists. */
  name: null;
  senderProfileId: null;
  /** Untracked: the confirm link goes straight to the confirm page (no redirect, no pixel). */
  tracking: { opens: boolean; clicks: boolean };
  compiled: CompiledTemplate;
}

// Substitutions (the form service passes them; a form's own confirmation template gets the same):
// confirmUrl, form {id, name}, expiresAt (ISO 8601), expiresOn (readable, UTC), expiryDays.
const FORM_CONFIRMATION_SOURCE = {
  subject: 'Please confirm your subscription to {{ form.name | default: "our mailing list" }}',
  html: `<!doctype html>
<html><body style="margin:0;padding:24px;font-family:Helvetica,Arial,sans-serif;color:#222;background:#f6f6f6">
<div style="max-width:560px;margin:0 auto;padding:24px;background:#fff;border-radius:6px">
<h1 style="font-size:20px;margin:0 0 16px">Confirm your subscription</h1>
<p>Someone, hopefully you, signed up with this address to <strong>{{ form.name | default: "our mailing list" }}</strong>.</p>
<p>Please confirm that you want to receive these emails:</p>
<p style="margin:24px 0"><a href="{{ confirmUrl }}" style="display:inline-block;padding:12px 20px;background:#1a5fb4;color:#fff;text-decoration:none;border-radius:4px">Confirm my subscription</a></p>
<p style="font-size:13px;color:#555">The link is valid until {{ expiresOn }}. If you did not sign up, ignore this email: you will not be subscribed.</p>
<p style="font-size:13px;color:#555">If the button does not work, open this address in your browser: {{ confirmUrl }}</p>
</div>
</body></html>`,
  text: `Confirm your subscription

Someone, hopefully you, signed up with this address to {{ form.name | default: "our mailing list" }}.
To confirm that you want to receive these emails, open this link:

{{ confirmUrl }}

The link is valid until {{ expiresOn }}. If you did not sign up, ignore this email: you will not be subscribed.
`,
};

const compiled: Record<BuiltinTemplateName, CompiledTemplate> = {
  FORM_CONFIRMATION: compileTemplate(FORM_CONFIRMATION_SOURCE),
};

export function builtinTemplate(name: BuiltinTemplateName): BuiltinTemplate {
  return { name: null, senderProfileId: null, tracking: { opens: false, clicks: false }, compiled: compiled[name] };
}
