// POST /public/forms/{formId}/submissions (the API contract "Forms": public submissions), forwarded by the
// gateway. JSON or urlencoded (a plain HTML form); CORS for the form's allowedOrigins; a honeypot
// input; a per client address and form limit: the transport's concerns. The use cases
// (app/submissions.ts) find the ACTIVE form and store an accepted submission with its job; it is
// answered 202 {received: true} whatever the address's state: the job decides later.
// A browser (Accept preferring text/html) never sees JSON: the thank-you page, the form again with
// the errors marked, or a plain page saying why the post was refused.
import express, { Router, type NextFunction, type Request, type Response } from 'express';
import { callLogger, DomainError, type Problem } from '@mailer/kit';
import { messagePage } from '@mailer/kit/html';
import { FormBodyError, readFormBody } from '@mailer/kit/form-body';
import { outboxRepository } from '@mailer/nats';
import { readerForm } from '../app/forms';
import { acceptSubmission, openForm } from '../app/submissions';
import type { Form } from '../domain/form';
import { formRepository } from '../store/forms';
import { submissionRepository } from '../store/submissions';
import type { FormHttpDeps } from './app';
import { HONEYPOT_NAME, postedSubmission } from './form-html';
import { prefersHtml, sendSubmissionHtml } from './landing';
import { slidingWindowLimiter } from './rate-limit';

export const SUBMISSION_BODY_LIMIT_BYTES = 16 * 1024;

/** What a reader's browser shows for each refusal, by errorId (anything else: the last entry). */
const REFUSAL_PAGES: Record<string, [title: string, text: string]> = {
  form_not_found: ['Form not found', 'This signup form does not exist.'],
  form_inactive: ['Signup closed', 'This signup form no longer accepts signups.'],
  origin_not_allowed: ['Signup not possible here', 'This signup form may not be sent from the page you used. Please sign up on the website of the newsletter itself.'],
  rate_limited: ['Too many signups', 'Too many signups came from your connection. Please wait a minute, then send the form again.'],
  internal_error: ['Something went wrong', 'Your signup could not be received. Please try again later.'],
  '': ['The form could not be sent', 'What your browser sent could not be read. Please go back and send the form again.'],
};

/** A refusal: the API's `{errorId, message, details?}` for a program, a plain page for a browser. */
function refuse(req: Request, res: Response, status: number, errorId: string, message: string, details?: Problem[]): void {
  res.status(status);
  if (prefersHtml(req)) {
    const [title, text] = REFUSAL_PAGES[errorId] ?? REFUSAL_PAGES[''];
    return void res.type('text/html; charset=utf-8').send(messagePage(title, text));
  }
  res.json(details?.length ? { errorId, message, details } : { errorId, message });
}

/** The address the gateway forwarded (it overwrites X-Forwarded-For with the reader's address), else the peer's. */
export function clientAddress(req: Request): string {
  return req.get('x-forwarded-for')?.split(',')[0]?.trim() || req.socket.remoteAddress || '';
}

/**
 * Origins that may post: the form's allowedOrigins, and the hosts that serve its landing page (a
 * browser posting the page's own form sends that page's origin: the page asks for it with its
 * referrer policy, see form-html.ts). `null` (a sandboxed frame, a page that hides its origin) is
 * none of these.
 */
function originAllowed(form: Form, origin: string, publicBaseUrl: string): boolean {
  if (form.allowedOrigins.some((o) => o.toLowerCase() === origin.toLowerCase())) return true;
  if (origin.toLowerCase() === new URL(publicBaseUrl).origin.toLowerCase()) return true;
  return form.domain !== null && origin.toLowerCase() === `https://${form.domain}`;
}

const corsHeaders = (res: Response, origin: string) =>
  res.set({ 'Access-Control-Allow-Origin': origin, Vary: 'Origin', 'Access-Control-Allow-Methods': 'POST', 'Access-Control-Allow-Headers': 'Content-Type, Accept', 'Access-Control-Max-Age': '600' });

type Handler = (req: Request, res: Response) => Promise<void>;
const route = (handler: Handler) => (req: Request, res: Response, next: NextFunction) => void handler(req, res).catch(next);

export function submissionRoutes(deps: FormHttpDeps): Router {
  const forms = formRepository(deps.store);
  const accepting = {
    store: deps.store,
    submissions: submissionRepository(deps.store, deps.config.FORM_SUBMISSION_RETENTION_DAYS),
    outbox: outboxRepository(deps.store),
    notifyOutbox: deps.notifyOutbox,
    now: deps.now,
    newId: deps.newId,
  };
  const limiter = slidingWindowLimiter(deps.config.FORM_SUBMISSIONS_PER_MINUTE, 60_000, () => deps.now().getTime());
  const router = Router();
  const path = '/public/forms/:formId/submissions';

  /** The ACTIVE form, or the 404 answered. */
  async function activeForm(req: Request, res: Response): Promise<Form | null> {
    try {
      return await openForm({ forms }, String(req.params.formId));
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      refuse(req, res, 404, err.errorId, err.message);
      return null;
    }
  }

  // Preflight: answered with CORS headers for the form's allowed origins only.
  router.options(
    path,
    route(async (req, res) => {
      const origin = req.get('origin');
      const form = await activeForm(req, res);
      if (!form) return;
      if (!origin || !originAllowed(form, origin, deps.config.PUBLIC_BASE_URL)) return refuse(req, res, 403, 'origin_not_allowed', 'This origin may not post to the form.');
      corsHeaders(res, origin).status(204).end();
    }),
  );

  const json = express.json({ limit: SUBMISSION_BODY_LIMIT_BYTES, strict: false, type: () => true });

  router.post(
    path,
    route(async (req, res) => {
      const address = clientAddress(req);
      const limited = limiter.take(`${address} ${String(req.params.formId).slice(0, 64).toLowerCase()}`);
      if (limited > 0) {
        res.set('Retry-After', String(Math.ceil(limited / 1000)));
        return refuse(req, res, 429, 'rate_limited', 'Too many submissions from this address; try again in a minute.');
      }
      const stored = await activeForm(req, res);
      if (!stored) return;
      const origin = req.get('origin');
      if (origin) {
        if (!originAllowed(stored, origin, deps.config.PUBLIC_BASE_URL)) return refuse(req, res, 403, 'origin_not_allowed', 'This origin may not post to the form.');
        corsHeaders(res, origin);
      }
      // The inputs' names and options as the field catalog has them now (as saved while it is away).
      const form = await readerForm(deps.catalog, stored, callLogger(deps.logger));
      const type = (req.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
      let body: unknown;
      let honeypot = '';
      let posted: ReturnType<typeof postedSubmission> | null = null;
      if (type === 'application/json') {
        try {
          body = await new Promise<unknown>((resolve, reject) => json(req, res, (err?: unknown) => (err ? reject(err) : resolve(req.body))));
        } catch (err) {
          const e = err as { type?: string };
          if (e.type === 'entity.too.large') return refuse(req, res, 413, 'payload_too_large', `The body exceeds ${SUBMISSION_BODY_LIMIT_BYTES} bytes.`);
          if (e.type === 'encoding.unsupported' || e.type === 'charset.unsupported') return refuse(req, res, 415, 'unsupported_media_type', 'Send UTF-8 JSON.');
          return refuse(req, res, 400, 'malformed_json', 'The body is not valid JSON.');
        }
        // The honeypot may come as a top-level member of a JSON body too (an embedded form serialised as is).
        if (body && typeof body === 'object' && !Array.isArray(body) && HONEYPOT_NAME in body) {
          const { [HONEYPOT_NAME]: trap, ...rest } = body as Record<string, unknown>;
          honeypot = typeof trap === 'string' ? trap : trap ? 'filled' : '';
          body = rest;
        }
      } else if (type === 'application/x-www-form-urlencoded' || type === 'multipart/form-data') {
        try {
          posted = postedSubmission(form, await readFormBody(req, SUBMISSION_BODY_LIMIT_BYTES));
        } catch (err) {
          if (!(err instanceof FormBodyError)) throw err;
          return refuse(req, res, err.status, err.status === 413 ? 'payload_too_large' : err.status === 415 ? 'unsupported_media_type' : 'validation_failed', err.message);
        }
        honeypot = posted.honeypot;
        body = { values: posted.values, ...(posted.consent ? { consent: posted.consent } : {}) };
      } else {
        return refuse(req, res, 415, 'unsupported_media_type', 'Send application/json or application/x-www-form-urlencoded.');
      }
      const html = prefersHtml(req);
      if (honeypot.trim() !== '') {
        // A bot: the same answer as an accepted submission, nothing stored, no job.
        deps.logger.info({ formId: form.id, honeypot: true }, 'submission dropped: honeypot filled');
        return html ? sendSubmissionHtml(res, form, { accepted: true }) : void res.status(202).json({ received: true });
      }
      try {
        await acceptSubmission(accepting, { form, body, clientAddress: address });
      } catch (err) {
        if (!(err instanceof DomainError)) throw err;
        if (html) return sendSubmissionHtml(res, form, { accepted: false, details: err.details ?? [], posted: posted ?? { values: {}, consent: null } });
        return refuse(req, res, 400, err.errorId, err.message, err.details);
      }
      if (html) return sendSubmissionHtml(res, form, { accepted: true });
      res.status(202).json({ received: true });
    }),
  );

  // Errors of this router answer a 500 (a page, or JSON), never a stack trace.
  router.use(path, (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    if (res.headersSent) return void res.destroy();
    callLogger(deps.logger).error({ err }, 'submission failed');
    refuse(req, res, 500, 'internal_error', 'The submission could not be stored; try again.');
  });
  return router;
}
