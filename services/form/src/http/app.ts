import express, { type NextFunction, type Request, type Response } from 'express';
import { callLogger } from '@mailer/kit';
import { messagePage } from '@mailer/kit/html';
import type { ServiceRuntime } from '@mailer/kit/service';
import type { AccountNames } from '@mailer/nats';
import type { Config } from '../config';
import type { PageDomainCheck } from '../app/page-domains';
import type { CatalogSource } from '../clients/catalog';
import type { SubscriberConfirmation } from '../clients/confirm-subscriber';
import { confirmRoutes } from './confirm';
import { landingRoutes, notFoundPage } from './landing';
import { submissionRoutes } from './submissions';

/** What the public routes of the form service share; each slice adds the members it needs. */
export type FormHttpDeps = Pick<ServiceRuntime<Config>, 'store' | 'now' | 'newId' | 'logger' | 'nc' | 'notifyOutbox'> & {
  config: Config;
  /** The subscriber service's ConfirmSubscriber (the confirm page's POST). */
  confirmations: SubscriberConfirmation;
  /** Accounts' display names (the confirm page names the account), read from the gateway's account records. */
  accounts: AccountNames;
  /** The subscriber service's field catalog: a form's options and tag names as they are now. */
  catalog: Pick<CatalogSource, 'fields'>;
  /** Whether a landing page's custom domain is still verified by its account. */
  pageDomains: PageDomainCheck;
};

/** The form service's public app: submissions, confirm pages, landing pages (forwarded by the gateway). */
export function publicApp(deps: FormHttpDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.use(submissionRoutes(deps));
  app.use(confirmRoutes(deps));
  app.use(landingRoutes(deps));
  // Anything else under the forwarded prefixes is the same plain page as a missing landing page.
  app.use((_req: Request, res: Response) => notFoundPage(res));
  // What a router left unanswered: readers never see internals.
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    if (res.headersSent) return void res.destroy();
    callLogger(deps.logger).error({ err }, 'page failed');
    res.status(500).type('text/html; charset=utf-8').send(messagePage('Something went wrong', 'Please try again later.'));
  });
  return app;
}
