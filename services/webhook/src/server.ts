import { outcomeCounter } from '@mailer/kit';
import type { ServiceRuntime } from '@mailer/kit/service';
import { OUTBOX_COLLECTION, outboxSchema, processedMessages, type OutboxDoc } from '@mailer/nats';
import { createOutbound, outboundSettingsOf } from '@mailer/outbound';
import { webhookDeliveriesV1, webhookSubscriptionsV1, webhookV1 } from '@mailer/proto';
import type { Config } from './config';
import { guardTargetCheck } from './app/target-check';
import { webhookHandlers } from './handlers/describe';
import { deliveryHandlers } from './handlers/deliveries';
import { subscriptionHandlers } from './handlers/subscriptions';
import { startFanOut, FAN_OUT_CONSUMER } from './events/fan-out';
import { startDeliveryWorker } from './events/delivery-worker';
import { deliveryRepository } from './store/deliveries';
import { secretKeyring, subscriptionRepository } from './store/subscriptions';
import { DISABLED_REASONS } from './domain/subscription';

/**
 * Registers the webhook service's handlers and starts its consumers (fan-out, delivery worker).
 * Layout (docs/architecture.md): handlers/ and events/ translate gRPC and facts and call one use case of app/
 * each; app/ uses domain/ (pure) and store/ (account-scoped repositories).
 */
export async function setup(ctx: ServiceRuntime<Config>): Promise<Array<() => Promise<unknown>>> {
  const { config, store, logger } = ctx;
  const deliveries = deliveryRepository(store, config.WEBHOOK_DELIVERY_RETENTION_DAYS);
  const subscriptions = subscriptionRepository(store, secretKeyring(config.SECRET_SEALING_KEY, config.SECRET_SEALING_KEY_PREVIOUS));
  ctx.grpc.add(webhookV1.WebhookServiceService, webhookHandlers({ subscriptions }));
  // Secrets stored in clear by an older version, or sealed under a previous key: re-sealed now, in
  // the background (each is also re-sealed when read before that).
  void subscriptions.resealAll().then(
    (r) => (r.resealed || r.failed.length) && logger[r.failed.length ? 'warn' : 'info'](r, 'webhook signing secrets re-sealed under the current key'),
    (err) => logger.error({ err }, 'webhook signing secrets: re-sealing at start failed (retried at the next start or by reseal-secrets)'),
  );
  const outbox = store.collection<OutboxDoc>(OUTBOX_COLLECTION, outboxSchema);
  const now = () => ctx.now();
  // Save-time check of target URLs: the guard's settings (OUTBOUND_ALLOW_HTTP, OUTBOUND_ALLOWED_CIDRS).
  const outboundPolicy = outboundSettingsOf(config);
  ctx.grpc.add(
    webhookSubscriptionsV1.WebhookSubscriptionServiceService,
    subscriptionHandlers({ subscriptions, checkTarget: guardTargetCheck(outboundPolicy), now, newId: ctx.newId }),
  );
  ctx.grpc.add(
    webhookDeliveriesV1.WebhookDeliveryServiceService,
    deliveryHandlers({ store, deliveries, subscriptions, outbox, now, notifyOutbox: () => ctx.notifyOutbox() }),
  );

  const processed = processedMessages(store, FAN_OUT_CONSUMER);
  const stopPruning = processed.pruneEvery(3600_000);
  const fanOut = startFanOut(ctx.nc, { store, deliveries, subscriptions, outbox, processed, now, notifyOutbox: () => ctx.notifyOutbox() }, logger);

  const outcomes = outcomeCounter(ctx.metrics.registry, {
    name: 'webhook_attempts_total',
    help: 'Webhook delivery attempts by outcome (delivered, retrying, failed, abandoned, not_due)',
    label: 'outcome',
    values: ['delivered', 'retrying', 'failed', 'abandoned', 'not_due'],
  });
  // A 410 or 5 days of failed deliveries disables a subscription: its customer gets nothing until
  // they re-enable it, so it is worth an alert.
  const subscriptionsDisabled = outcomeCounter(ctx.metrics.registry, {
    name: 'webhook_subscriptions_disabled_total',
    help: 'Webhook subscriptions disabled by their deliveries, by reason (TARGET_GONE: the target answered 410; FAILING_FOR_5_DAYS)',
    label: 'reason',
    values: DISABLED_REASONS,
  });
  // Every attempt goes through the guard (https unless allowed, the address actually connected to checked,
  // no redirects). As many connections per origin as attempts may be in flight, so subscriptions sharing
  // a host never queue behind each other in the agent (the per-subscription bound limits each).
  const outbound = createOutbound(outboundPolicy, { connectionsPerOrigin: config.WEBHOOK_DELIVERY_CONCURRENCY });
  const worker = startDeliveryWorker({
    nc: ctx.nc,
    deps: {
      deliveries,
      subscriptions,
      outbound,
      now,
      claimMs: config.WEBHOOK_ATTEMPT_CLAIM_SECONDS * 1000,
      retrySchedule: config.WEBHOOK_RETRY_SCHEDULE_SECONDS,
      subscriptionsDisabled,
    },
    perSubscription: config.WEBHOOK_SUBSCRIPTION_IN_FLIGHT,
    concurrency: config.WEBHOOK_DELIVERY_CONCURRENCY,
    scanIntervalMs: config.WEBHOOK_SCAN_INTERVAL_MS,
    logger,
    outcomes,
  });
  return [() => fanOut.stop(), async () => (await worker.stop(), await outbound.close()), stopPruning];
}
