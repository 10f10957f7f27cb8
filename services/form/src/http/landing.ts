// Hosted landing pages (the API contract "Forms": GET /public/pages/{routePath}) and the HTML answers a
// browser gets when it posts a signup form (the thank-you page, or the form again with the errors).
// Server-rendered, no script; the gateway forwards /public/pages/* and /public/forms/* here.
//
// Which host was asked: the gateway's proxy keeps the reader's Host (no changeOrigin) and sets
// X-Forwarded-Host to it, overwriting whatever the client sent; this listener is reachable only
// behind the gateway, so the header is the gateway's word. A page is served on its form's `domain`
// while its account has that domain verified, or on the host of PUBLIC_BASE_URL when the form names none.
import { Router, type NextFunction, type Request, type Response } from 'express';
import { callLogger, type Problem } from '@mailer/kit';
import { messagePage } from '@mailer/kit/html';
import { readerForm } from '../app/forms';
import { openLandingPage, openThankYouPage } from '../app/landing-pages';
import type { Form } from '../domain/form';
import { formRepository } from '../store/forms';
import type { FormHttpDeps } from './app';
import { fieldErrorsOf, renderFormHtml, thankYouPage, type PostedSubmission } from './form-html';

const html = (res: Response, status: number, body: string) => void res.status(status).type('text/html; charset=utf-8').send(body);

/** The one answer for a page that is not there: unknown, draft, unpublished, inactive or on another host. */
export const notFoundPage = (res: Response) => html(res, 404, messagePage('Page not found', 'This page does not exist or is no longer available.'));

/** The host the reader asked for, lowercase, as the gateway passed it on. */
export function requestHost(req: Request): string {
  const forwarded = req.get('x-forwarded-host')?.split(',')[0]?.trim();
  return (forwarded || req.get('host') || '').toLowerCase();
}

/** Whether the request prefers an HTML answer (a browser posting a plain form) over JSON. */
export const prefersHtml = (req: Request): boolean => req.accepts(['application/json', 'text/html']) === 'text/html';

/** Where a browser lands after an accepted submission (POST, then 303 to a GET: a reload does not post again). */
export const thankYouPath = (formId: string) => `/public/forms/${encodeURIComponent(formId)}/thank-you`;

/**
 * The HTML answer to a browser's submission (used by the submissions route for text/html-preferring
 * requests): accepted -> 303 to the thank-you page, whatever the address's state; refused -> 400 with
 * the form again, the reader's values kept and each problem beside its input.
 */
export function sendSubmissionHtml(
  res: Response,
  form: Form,
  outcome: { accepted: true } | { accepted: false; details: readonly Problem[]; posted: Pick<PostedSubmission, 'values' | 'consent'> },
): void {
  if (outcome.accepted) {
    res.status(303).set('Location', thankYouPath(form.id)).type('text/plain; charset=utf-8').send('See the thank-you page.');
    return;
  }
  const errors = fieldErrorsOf(outcome.details);
  // A refusal with no detail still marks the page as refused.
  if (Object.keys(errors).length === 0) errors.form = 'The form could not be sent.';
  html(res, 400, renderFormHtml(form, { values: outcome.posted.values, errors, consentGiven: outcome.posted.consent !== null }));
}

type Handler = (req: Request, res: Response) => Promise<void>;
const route = (handler: Handler) => (req: Request, res: Response, next: NextFunction) => void handler(req, res).catch(next);

export function landingRoutes(deps: FormHttpDeps): Router {
  const pages = { forms: formRepository(deps.store), pageDomains: deps.pageDomains, publicBaseUrl: deps.config.PUBLIC_BASE_URL };
  const router = Router();

  router.get(
    '/public/pages/:routePath',
    route(async (req, res) => {
      const form = await openLandingPage(pages, requestHost(req), String(req.params.routePath));
      if (!form) return notFoundPage(res);
      html(res, 200, renderFormHtml(await readerForm(deps.catalog, form, callLogger(deps.logger))));
    }),
  );

  // The page after an accepted browser submission. It says nothing about the address and changes
  // nothing; any active form has one (embedded forms post here too).
  router.get(
    '/public/forms/:formId/thank-you',
    route(async (req, res) => {
      const form = await openThankYouPage(pages, String(req.params.formId));
      if (!form) return notFoundPage(res);
      html(res, 200, thankYouPage(form));
    }),
  );

  return router;
}
