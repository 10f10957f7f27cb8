import type { ServiceRuntime } from '@mailer/kit/service';
import { commonV1, formV1 } from '@mailer/proto';
import type { Config } from './config';
import { startFieldDeletedConsumer } from './events/field-deleted';
import { fieldUsageHandlers } from './handlers/field-usage';
import { publicApp } from './http/app';
import { PAGES_CSP } from './http/form-html';
import { formRepository } from './store/forms';
import { subscriberCatalog } from './clients/catalog';
import { messagingCatalog } from './clients/messaging';
import { formHandlers } from './handlers/forms';

/** Deadline of each call to the subscriber and messaging services while a form is saved: well inside the gateway's 5 s. */
const PEER_DEADLINE_MS = 2_000;

/**
 * Registers the form service's handlers and starts its consumers. Layout (DESIGN.md): handlers/ and
 * events/ translate gRPC and facts and call one use case of app/ each; app/ uses domain/ (pure) and
 * store/ (account-scoped repositories).
 */
export async function setup(ctx: ServiceRuntime<Config>): Promise<Array<() => Promise<unknown>>> {
  const forms = formRepository(ctx.store);
  const catalog = subscriberCatalog(ctx.config.SUBSCRIBER_GRPC_ADDR, PEER_DEADLINE_MS, ctx.logger);
  const messaging = messagingCatalog(ctx.config.MESSAGING_GRPC_ADDR, PEER_DEADLINE_MS, ctx.logger);
  ctx.grpc.add(
    formV1.FormServiceService,
    formHandlers({ forms, catalog, messaging, publicBaseUrl: ctx.config.PUBLIC_BASE_URL, now: ctx.now, newId: ctx.newId }),
  );
  // The subscriber service asks every service that can use a subscriber field before a field is
  // archived or deleted: here, the forms that collect it.
  ctx.grpc.add(commonV1.FieldUsageServiceService, fieldUsageHandlers({ forms }));
  // Public submissions, confirm and landing pages, forwarded by the gateway (/public/forms|pages|confirm).
  ctx.serveHttp({
    address: ctx.config.FORM_HTTP_ADDR,
    contentSecurityPolicy: PAGES_CSP,
    app: publicApp({ config: ctx.config, store: ctx.store, now: ctx.now, newId: ctx.newId, logger: ctx.logger, nc: ctx.nc, notifyOutbox: ctx.notifyOutbox }),
  });
  const fieldDeleted = startFieldDeletedConsumer(ctx.nc, { forms, log: (msg, extra) => ctx.logger.warn(extra ?? {}, msg) });
  return [
    () => fieldDeleted.stop(),
    async () => {
      catalog.close();
      messaging.close();
    },
  ];
}
