// The messaging service's reader-facing HTTP app (the API contract "Public web surface"): open pixel, click
// redirect, preference page and one-click unsubscribe. Served by the kit's HTTP listener on
// MESSAGING_HTTP_ADDR (request id, access log, metrics, security headers, no-store) behind the
// gateway, which forwards /t/* and /u/*. Each route translates the request to one use case, as
// handlers/ do for gRPC. Every refusal is a plain page: a forged, edited or foreign token is 404.
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { callLogger, PeerUnavailable, type Logger } from '@mailer/kit';
import { changePreferences, oneClickUnsubscribe, preferencesOf, type PreferenceDeps, type PreferenceChange } from '../app/preferences';
import { recordClick, recordOpen, type TrackingDeps, type Visit } from '../app/tracking';
import { FormBodyError, readFormBody, type FormFields } from '@mailer/kit/form-body';
import { confirmationPage, messagePage, preferencePage } from './html';

export interface PagesDeps extends TrackingDeps, PreferenceDeps {
  logger: Logger;
}

/** A transparent 1x1 GIF (43 bytes). */
export const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

const html = (res: Response, status: number, body: string) => void res.status(status).type('text/html; charset=utf-8').send(body);
const notFound = (res: Response) => html(res, 404, messagePage('Not found', 'This link is not valid. It may have been copied incompletely.'));

// Express answers HEAD with the GET route: a HEAD probe counts, as a machine's.
const visitOf = (req: Request): Visit => ({ userAgent: req.get('user-agent') ?? null, ip: req.ip ?? null, probe: req.method === 'HEAD' });

type Handler = (req: Request<{ token: string }>, res: Response) => Promise<void>;
const route = (handler: Handler) => (req: Request<{ token: string }>, res: Response, next: NextFunction) => void handler(req, res).catch(next);

/** What a POST /u/{token} body asks for: RFC 8058 one-click, the page's form, or neither. */
function postedChange(fields: FormFields): 'one-click' | PreferenceChange | null {
  if (fields.get('List-Unsubscribe')?.includes('One-Click')) return 'one-click';
  const action = fields.get('action')?.[0];
  if (action === 'unsubscribe_all') return { action };
  if (action === 'save') return { action, topicIds: fields.get('topic') ?? [] };
  return null;
}

export function publicPages(deps: PagesDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // The gateway is the one hop in front: it sets X-Forwarded-For to the reader's address alone.
  app.set('trust proxy', 1);

  app.get(
    '/t/o/:token',
    route(async (req, res) => {
      if (!(await recordOpen(deps, req.params.token, visitOf(req)))) return notFound(res);
      res.status(200).type('image/gif').send(PIXEL);
    }),
  );

  app.get(
    '/t/c/:token',
    route(async (req, res) => {
      const url = await recordClick(deps, req.params.token, visitOf(req));
      if (url === null) return notFound(res);
      // Set as stored (Node refuses control characters in a header): the message's own link, verbatim.
      res.status(302).set('Location', url).end();
    }),
  );

  app.get(
    '/u/:token',
    route(async (req, res) => {
      const topics = await preferencesOf(deps, req.params.token);
      if (topics === null) return notFound(res);
      html(res, 200, preferencePage(topics));
    }),
  );

  app.post(
    '/u/:token',
    route(async (req, res) => {
      const change = postedChange(await readFormBody(req));
      if (change === null) return html(res, 400, messagePage('Bad request', 'This form could not be read. Please open the link from your email again.'));
      if (change === 'one-click') {
        if (!(await oneClickUnsubscribe(deps, req.params.token))) return notFound(res);
        res.status(200).end();
        return;
      }
      const topics = await changePreferences(deps, req.params.token, change);
      if (topics === null) return notFound(res);
      html(res, 200, confirmationPage(topics));
    }),
  );

  app.use((_req: Request, res: Response) => notFound(res));

  // Four parameters: Express's error handler. Readers never see internals.
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    if (res.headersSent) return void res.destroy();
    if (err instanceof FormBodyError) {
      const title = err.status === 413 ? 'Request too large' : 'Bad request';
      return html(res, err.status, messagePage(title, 'This form could not be read. Please open the link from your email again.'));
    }
    if (err instanceof PeerUnavailable) {
      return html(res, 503, messagePage('Temporarily unavailable', 'Your preferences cannot be shown or changed right now. Please try again in a few minutes.'));
    }
    callLogger(deps.logger).error({ err }, 'public page failed');
    html(res, 500, messagePage('Something went wrong', 'Please try again later.'));
  });
  return app;
}
