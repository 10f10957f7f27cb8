// The delivery log and its actions through the API (GET .../deliveries, POST .../redeliver, POST .../test).
import { randomUUID } from 'node:crypto';
import { notFound, pageOf } from '@mailer/kit';
import { outboxRecord, type OutboxDoc } from '@mailer/nats';
import { job } from '@mailer/nats/facts';
import type { Collection, Store } from '@mailer/store';
import { TEST_EVENT_TYPE, webhookBody } from '../domain/webhook-message';
import type { DeliveryDoc, DeliveryRepository, DeliveryStatus } from '../store/deliveries';
import type { SubscriptionRepository } from '../store/subscriptions';
import { newDelivery, recordDeliveries } from './fan-out';

const MAX_DELIVERIES_PAGE_SIZE = 100;

export interface DeliveryLogDeps {
  store: Store;
  deliveries: DeliveryRepository;
  subscriptions: Pick<SubscriptionRepository, 'get'>;
  outbox: Collection<OutboxDoc>;
  now: () => Date;
  /** Wakes the outbox relay so the job is published at once. */
  notifyOutbox: () => void;
}

const subscriptionNotFound = (id: string) => notFound('webhook_subscription_not_found', `webhook subscription ${id} does not exist`);

async function subscriptionOf(deps: DeliveryLogDeps, accountId: string, subscriptionId: string) {
  const sub = await deps.subscriptions.get(accountId, subscriptionId);
  if (!sub) throw subscriptionNotFound(subscriptionId);
  return sub;
}

export async function listDeliveries(
  deps: DeliveryLogDeps,
  q: { accountId: string; subscriptionId: string; status?: DeliveryStatus; pageNumber: number; pageSize: number },
): Promise<{ items: DeliveryDoc[]; pageNumber: number; pageSize: number; totalItems: number; totalPages: number }> {
  // Deliveries carry their attempts and response bodies: pages of at most 100.
  const { pageNumber, pageSize } = pageOf(q.pageNumber, q.pageSize, MAX_DELIVERIES_PAGE_SIZE);
  await subscriptionOf(deps, q.accountId, q.subscriptionId);
  const { items, totalItems } = await deps.deliveries.list(q.accountId, q.subscriptionId, { status: q.status, pageNumber, pageSize });
  return { items, pageNumber, pageSize, totalItems, totalPages: Math.ceil(totalItems / pageSize) };
}

/** A new attempt of an existing delivery, due now, with a fresh retry schedule; its job through the outbox. */
export async function redeliver(deps: DeliveryLogDeps, q: { accountId: string; subscriptionId: string; deliveryId: string }): Promise<void> {
  await subscriptionOf(deps, q.accountId, q.subscriptionId);
  const delivery = await deps.deliveries.get(q.accountId, q.deliveryId);
  if (!delivery || delivery.subscriptionId !== q.subscriptionId) throw notFound('webhook_delivery_not_found', `webhook delivery ${q.deliveryId} does not exist`);
  const now = deps.now();
  await deps.store.transaction(async (tx) => {
    await deps.deliveries.reschedule(q.accountId, q.deliveryId, now, tx);
    // A fresh outbox id: JetStream's duplicate window must not drop a second redelivery of the same delivery.
    const j = job('webhook', { accountId: q.accountId, subscriptionId: q.subscriptionId, deliveryIds: [q.deliveryId] });
    await deps.outbox.insertMany([outboxRecord(j.subject, j.payload)], { tx });
  });
  deps.notifyOutbox();
}

/** A `webhook.test` delivery to this subscription only, whatever event it names (an inactive one abandons it, as any delivery). */
export async function sendTestEvent(deps: DeliveryLogDeps, q: { accountId: string; subscriptionId: string }): Promise<string> {
  const sub = await subscriptionOf(deps, q.accountId, q.subscriptionId);
  const now = deps.now();
  const eventId = randomUUID();
  const body = webhookBody(eventId, TEST_EVENT_TYPE, now.toISOString(), { subscriptionId: sub.id, message: 'This is a test event.' });
  const made = newDelivery(sub, eventId, TEST_EVENT_TYPE, body, now);
  await deps.store.transaction((tx) => recordDeliveries(deps, [made], tx));
  deps.notifyOutbox();
  return made._id;
}
