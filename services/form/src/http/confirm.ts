// GET/POST /public/confirm/{token} (the API contract "Forms", "Public web surface"), forwarded by the gateway:
// GET shows a page with a "Confirm" button and changes nothing (mail scanners prefetch links); the
// button POSTs to the same address and confirms (app/confirm-subscription.ts). Plain server-rendered
// pages, no script, every customer text (the account's display name, the form's name) escaped. The
// token travels in the path only; the listener's access log and metrics name the route pattern,
// never the path.
import { Router, type NextFunction, type Request, type Response } from 'express';
import { callLogger, PeerUnavailable } from '@mailer/kit';
import { escapeHtml, htmlPage, messagePage } from '@mailer/kit/html';
import { confirmationPageOf, confirmSubscription, type ConfirmDeps, type ConfirmOutcome } from '../app/confirm-subscription';
import { readableUtc } from '../app/confirmation-mail';
import { confirmTokens } from '../app/confirm-token';
import { formRepository } from '../store/forms';
import { submissionRepository } from '../store/submissions';
import type { FormHttpDeps } from './app';

const PATH = '/public/confirm/:token';

const html = (res: Response, status: number, body: string) => void res.status(status).type('text/html; charset=utf-8').send(body);

/** Whom the reader subscribes to: " from <account> (signup form <form name>)", each part when known; escaped. */
const subscribedTo = (accountName: string | null, formName: string | null) =>
  (accountName ? ` from <strong>${escapeHtml(accountName)}</strong>` : '') + (formName ? ` (signup form <em>${escapeHtml(formName)}</em>)` : '');

/** The page (and status) of each outcome. */
export function confirmPage(outcome: ConfirmOutcome): { status: number; body: string } {
  switch (outcome.kind) {
    case 'invalid':
      return { status: 404, body: messagePage('Not found', 'This link is not valid. It may have been copied incompletely.') };
    case 'expired':
      return { status: 410, body: messagePage('Link expired', 'This confirmation link has expired. To subscribe, please sign up again: you will get a new link.') };
    case 'gone':
      return { status: 410, body: messagePage('Link no longer valid', 'This subscription no longer exists. To subscribe, please sign up again.') };
    case 'pending':
      return { status: 503, body: messagePage('Almost there', 'Your signup is still being processed. Please try again in a minute.') };
    case 'ready':
      return {
        status: 200,
        body: htmlPage(
          'Confirm your subscription',
          `<h1>Confirm your subscription</h1>\n<p>Please confirm that you want to receive emails${subscribedTo(outcome.accountName, outcome.formName)}.</p>\n` +
            // An empty action posts to this very address: the token stays in the path, never in a body or a query.
            `<form method="post" action=""><button type="submit">Confirm</button></form>\n` +
            `<p class="hint">This link is valid until ${escapeHtml(readableUtc(outcome.expiresAt))}.</p>`,
        ),
      };
    case 'confirmed':
      return {
        status: 200,
        body: htmlPage(
          'Subscription confirmed',
          `<h1>Subscription confirmed</h1>\n<p>Thank you: your subscription is confirmed. You will receive emails${subscribedTo(outcome.accountName, outcome.formName)}.</p>`,
        ),
      };
    case 'refused':
      return {
        status: 409,
        body: messagePage('Cannot be confirmed', 'This address was unsubscribed or blocked since the signup, so this link cannot subscribe it. Nothing was changed.'),
      };
  }
}

type Handler = (req: Request, res: Response) => Promise<void>;
const route = (handler: Handler) => (req: Request, res: Response, next: NextFunction) => void handler(req, res).catch(next);

export function confirmRoutes(deps: FormHttpDeps): Router {
  const confirm: ConfirmDeps = {
    tokens: confirmTokens(deps.config),
    submissions: submissionRepository(deps.store, deps.config.FORM_SUBMISSION_RETENTION_DAYS),
    forms: formRepository(deps.store),
    confirmations: deps.confirmations,
    accounts: deps.accounts,
    now: deps.now,
  };
  const router = Router();
  const answer = (res: Response, outcome: ConfirmOutcome) => {
    const page = confirmPage(outcome);
    if (outcome.kind === 'pending') res.set('Retry-After', '60');
    html(res, page.status, page.body);
  };

  router.get(PATH, route(async (req, res) => answer(res, await confirmationPageOf(confirm, String(req.params.token)))));
  router.post(
    PATH,
    route(async (req, res) => {
      req.resume(); // the button's empty form body says nothing: discard it
      answer(res, await confirmSubscription(confirm, String(req.params.token)));
    }),
  );

  // Readers never see internals: a peer that does not answer is a plain 503 page, anything else 500.
  router.use(PATH, (err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    if (res.headersSent) return void res.destroy();
    if (err instanceof PeerUnavailable) {
      res.set('Retry-After', '60');
      return html(res, 503, messagePage('Temporarily unavailable', 'Your subscription cannot be confirmed right now. Please try again in a few minutes.'));
    }
    callLogger(deps.logger).error({ err }, 'confirm page failed');
    html(res, 500, messagePage('Something went wrong', 'Please try again later.'));
  });
  return router;
}
