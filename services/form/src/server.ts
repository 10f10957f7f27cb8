import type { ServiceRuntime } from '@mailer/kit/service';
import { TIME_LIMITS } from '@mailer/kit';
import { commonV1, consentSignupV1, formV1, submissionsV1 } from '@mailer/proto';
import type { Config } from './config';
import { startFieldDeletedConsumer } from './events/field-deleted';
import { fieldUsageHandlers } from './handlers/field-usage';
import { publicApp } from './http/app';
import { PAGES_CSP } from './http/form-html';
import { formRepository } from './store/forms';
import { subscriberCatalog } from './clients/catalog';
import { messagingCatalog } from './clients/messaging';
import { formHandlers } from './handlers/forms';
import { confirmationMailer } from './app/confirmation-mail';
import { pageDomainCheck } from './app/page-domains';
import { confirmTokens } from './app/confirm-token';
import { emailSender } from './clients/email-messages';
import { subscriberConfirmation } from './clients/confirm-subscriber';
import { signupPeers } from './clients/signup';
import { startSubmissionJobs } from './events/submission-jobs';
import { accountNames, outboxRepository } from '@mailer/nats';
import { submissionRepository } from './store/submissions';
import { submissionHandlers } from './handlers/submissions';
import { consentSignupHandlers } from './handlers/consent-signup';

/** Deadline of each call to the subscriber and messaging services while a form is saved (the gateway's deadline allows for two). */
const PEER_DEADLINE_MS = TIME_LIMITS.peerCall;
/** Deadline of a confirmation send from the submission job: messaging renders and waits (bounded) for its job's PubAck. */
const SEND_DEADLINE_MS = 15_000;

/**
 * Registers the form service's handlers and starts its consumers. Layout (docs/architecture.md): handlers/ and
 * events/ translate gRPC and facts and call one use case of app/ each; app/ uses domain/ (pure) and
 * store/ (account-scoped repositories).
 */
export async function setup(ctx: ServiceRuntime<Config>): Promise<Array<() => Promise<unknown>>> {
  const forms = formRepository(ctx.store);
  const catalog = subscriberCatalog(ctx.config.SUBSCRIBER_GRPC_ADDR, PEER_DEADLINE_MS, ctx.logger);
  const messaging = messagingCatalog(ctx.config.MESSAGING_GRPC_ADDR, PEER_DEADLINE_MS, ctx.logger);
  // The double opt-in confirmation mail (signed confirm link, sent through messaging, once per submission).
  const tokens = confirmTokens(ctx.config);
  const emails = emailSender(ctx.config.MESSAGING_GRPC_ADDR, SEND_DEADLINE_MS, ctx.logger);
  const confirmations = subscriberConfirmation(ctx.config.SUBSCRIBER_GRPC_ADDR, PEER_DEADLINE_MS, ctx.logger);
  ctx.grpc.add(
    formV1.FormServiceService,
    formHandlers({ forms, catalog, messaging, publicBaseUrl: ctx.config.PUBLIC_BASE_URL, now: ctx.now, newId: ctx.newId }),
  );
  // The subscriber service asks every service that can use a subscriber field before a field is
  // archived or deleted: here, the forms that collect it.
  ctx.grpc.add(commonV1.FieldUsageServiceService, fieldUsageHandlers({ forms }));
  const submissions = submissionRepository(ctx.store, ctx.config.FORM_SUBMISSION_RETENTION_DAYS);
  ctx.grpc.add(submissionsV1.SubmissionServiceService, submissionHandlers({ forms, submissions }));
  // Public submissions, confirm and landing pages, forwarded by the gateway (/public/forms|pages|confirm).
  // The confirm page names the account: its display name is read (only that) from the gateway's
  // account records in NATS KV, the one place it lives.
  const accounts = accountNames(ctx.nc, (msg, extra) => ctx.logger.warn(extra ?? {}, msg));
  const pageDomains = pageDomainCheck({ messaging, recheckMs: ctx.config.FORM_PAGE_DOMAIN_RECHECK_SECONDS * 1000, now: ctx.now, logger: ctx.logger });
  ctx.serveHttp({
    address: ctx.config.FORM_HTTP_ADDR,
    contentSecurityPolicy: PAGES_CSP,
    app: publicApp({ config: ctx.config, store: ctx.store, now: ctx.now, newId: ctx.newId, logger: ctx.logger, nc: ctx.nc, notifyOutbox: ctx.notifyOutbox, confirmations, catalog, accounts, pageDomains }),
  });
  const fieldDeleted = startFieldDeletedConsumer(ctx.nc, { forms, log: (msg, extra) => ctx.logger.warn(extra ?? {}, msg) });
  // The submission job: suppression list and Signup, the decision, the confirmation mail, the record.
  const peers = signupPeers({ subscriber: ctx.config.SUBSCRIBER_GRPC_ADDR, messaging: ctx.config.MESSAGING_GRPC_ADDR }, PEER_DEADLINE_MS, ctx.logger);
  const sendConfirmationMail = confirmationMailer({ tokens, sender: emails, tokenDays: ctx.config.FORM_CONFIRM_TOKEN_DAYS, now: ctx.now });
  const limits = { subscriberLimit: ctx.config.FORM_ACCOUNT_SUBSCRIBER_LIMIT, dailyConfirmations: ctx.config.FORM_ACCOUNT_DAILY_CONFIRMATIONS };
  // Consent signups of custom events (the messaging service's event consumer asks): the same double opt-in.
  ctx.grpc.add(consentSignupV1.ConsentSignupServiceService, consentSignupHandlers({ submissions, peers, sendConfirmationMail, now: ctx.now, limits }));
  const submissionJobs = startSubmissionJobs(
    ctx.nc,
    {
      store: ctx.store,
      forms,
      submissions,
      outbox: outboxRepository(ctx.store),
      notifyOutbox: ctx.notifyOutbox,
      peers,
      sendConfirmationMail,
      now: ctx.now,
      limits,
    },
    { concurrency: ctx.config.FORM_SUBMISSION_CONCURRENCY, logger: ctx.logger },
  );
  return [
    () => fieldDeleted.stop(),
    () => submissionJobs.stop(),
    async () => peers.close(),
    async () => {
      catalog.close();
      messaging.close();
      emails.close();
      confirmations.close();
    },
  ];
}
