// Rules of an email template's stored values (the API contract "Email templates"), pure: the name, the
// tracking defaults, and the errors of the Liquid engine (@mailer/templates) as DomainErrors.
import { DomainError, GrpcStatus, invalid } from '@mailer/kit';
import { TemplateError } from '@mailer/templates';

export const TEMPLATE_NAME_PATTERN = /^[a-z0-9][a-z0-9._-]{0,99}$/;

export interface TrackingInput {
  opens?: boolean | null;
  clicks?: boolean | null;
}

export function checkTemplateName(name: string, path = 'body.name'): string {
  if (!TEMPLATE_NAME_PATTERN.test(name ?? '')) {
    throw invalid('validation_failed', `${path}: a template name matches ${TEMPLATE_NAME_PATTERN.source}`, [{ path, problem: `must match ${TEMPLATE_NAME_PATTERN.source}` }]);
  }
  return name;
}

/** Each member absent or null defaults to true (the API contract: tracking defaults to {opens: true, clicks: true}). */
export const trackingOf = (t: TrackingInput | null | undefined) => ({ opens: t?.opens ?? true, clicks: t?.clicks ?? true });

/**
 * A TemplateError as the DomainError the gateway maps: syntax and size problems and reserved keys
 * are the request's fault (400); a render that hits a limit is `422 template_render_failed` (the
 * gRPC code says 400, the gateway's catalogue gives the errorId its 422). The details name the part
 * (`html`, `subject`, `text`, `substitutionData.<key>`) as the API contract shows them.
 */
export function templateDomainError(err: TemplateError): DomainError {
  return new DomainError(GrpcStatus.INVALID_ARGUMENT, err.errorId, err.message, err.details.map((d) => ({ path: d.path, problem: d.problem })));
}

/** Runs fn, turning a TemplateError into its DomainError. */
export async function templateCall<T>(fn: () => T | Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof TemplateError) throw templateDomainError(err);
    throw err;
  }
}
