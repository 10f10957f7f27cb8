// Landing page use cases (GET /public/pages/{routePath} and the thank-you page): which form a reader's
// host and route path name. http/landing.ts renders them.
import { pageDomainOfHost, ROUTE_PATH_PATTERN, type Form } from '../domain/form';
import type { FormRepository } from '../store/forms';
import type { PageDomainCheck } from './page-domains';

export interface LandingPageDeps {
  forms: Pick<FormRepository, 'publishedPageAcrossAccounts' | 'getAcrossAccounts'>;
  pageDomains: PageDomainCheck;
  publicBaseUrl: string;
}

/**
 * The published page on `host`: the form whose domain is the host (or, when the host carries a port,
 * its name without it: a gateway behind a non-standard port still serves the custom domain), or the
 * default host's page. Only ACTIVE forms: an inactive form refuses submissions, so its page would too.
 * A custom domain its account no longer has verified serves nothing (app/page-domains.ts). Null: no page.
 */
export async function openLandingPage(deps: LandingPageDeps, host: string, routePath: string): Promise<Form | null> {
  if (!ROUTE_PATH_PATTERN.test(routePath)) return null;
  const domain = pageDomainOfHost(host, deps.publicBaseUrl);
  const candidates = domain === null ? [null] : [domain, domain.replace(/:\d+$/, '')];
  for (const candidate of new Set(candidates)) {
    const form = await deps.forms.publishedPageAcrossAccounts(candidate, routePath);
    if (!form) continue;
    if (form.status !== 'ACTIVE') return null;
    return form.domain && !(await deps.pageDomains.servable(form.accountId, form.domain)) ? null : form;
  }
  return null;
}

/** The ACTIVE form whose thank-you page is asked (any active form has one), or null. */
export async function openThankYouPage(deps: Pick<LandingPageDeps, 'forms'>, formId: string): Promise<Form | null> {
  const form = await deps.forms.getAcrossAccounts(formId);
  return form?.status === 'ACTIVE' ? form : null;
}
