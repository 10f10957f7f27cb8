import express from 'express';
import type { ServiceRuntime } from '@mailer/kit/service';
import type { Config } from '../config';
import type { SubscriberConfirmation } from '../clients/confirm-subscriber';
import { confirmRoutes } from './confirm';
import { landingRoutes } from './landing';
import { submissionRoutes } from './submissions';

/** What the public routes of the form service share; each slice adds the members it needs. */
export type FormHttpDeps = Pick<ServiceRuntime<Config>, 'store' | 'now' | 'newId' | 'logger' | 'nc' | 'notifyOutbox'> & {
  config: Config;
  /** The subscriber service's ConfirmSubscriber (the confirm page's POST). */
  confirmations: SubscriberConfirmation;
};

/** The form service's public app: submissions, confirm pages, landing pages (forwarded by the gateway). */
export function publicApp(deps: FormHttpDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.use(submissionRoutes(deps));
  app.use(confirmRoutes(deps));
  app.use(landingRoutes(deps));
  return app;
}
