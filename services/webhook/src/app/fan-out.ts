// Fan-out of a DOMAIN fact (the API contract "Webhooks"): one delivery per active subscription of the account whose
// event is the fact's type or `*`, each created with its job in one transaction (the job reaches JOBS
// through the outbox), and the fact's id recorded in the same transaction, so a redelivered fact
// creates nothing twice.
import { randomUUID } from 'node:crypto';
import { outboxRecord, type OutboxDoc, type ProcessedMessages } from '@mailer/nats';
import { job, type DomainFact } from '@mailer/nats/facts';
import type { Collection, Store, Transaction } from '@mailer/store';
import { eventData, webhookBody } from '../domain/webhook-message';
import type { WebhookEvent } from '../domain/webhook-events';
import type { Subscription } from '../domain/subscription';
import { UNCLAIMED, type DeliveryDoc, type DeliveryRepository } from '../store/deliveries';

export interface FanOutDeps {
  store: Store;
  deliveries: DeliveryRepository;
  subscriptions: { activeMatching(accountId: string, event: WebhookEvent): Promise<Subscription[]> };
  outbox: Collection<OutboxDoc>;
  processed: ProcessedMessages;
  now: () => Date;
  /** Wakes the outbox relay so the jobs are published at once. */
  notifyOutbox: () => void;
}

/** A new delivery of `body`, due now. */
export function newDelivery(sub: Pick<Subscription, 'id' | 'accountId'>, eventId: string, type: string, body: string, now: Date): DeliveryDoc {
  return {
    _id: randomUUID(),
    accountId: sub.accountId,
    subscriptionId: sub.id,
    eventId,
    type,
    body,
    status: 'PENDING',
    attempts: [],
    failures: 0,
    nextAttemptAt: now,
    claimedUntil: UNCLAIMED,
    createdAt: now,
  };
}

/** Deliveries one job names at most (the job definition's bound). */
const JOB_DELIVERIES = 1000;

/**
 * The jobs of new (or rescheduled) deliveries: one per subscription and up to JOB_DELIVERIES of its
 * deliveries, not one per delivery. The first delivery's id is the outbox id (the job's msgID).
 */
export function deliveryJobs(deliveries: Array<Pick<DeliveryDoc, '_id' | 'accountId' | 'subscriptionId'>>): OutboxDoc[] {
  const bySubscription = new Map<string, typeof deliveries>();
  for (const d of deliveries) {
    const group = bySubscription.get(d.subscriptionId);
    if (group) group.push(d);
    else bySubscription.set(d.subscriptionId, [d]);
  }
  const jobs: OutboxDoc[] = [];
  for (const group of bySubscription.values()) {
    for (let i = 0; i < group.length; i += JOB_DELIVERIES) {
      const [first, ...rest] = group.slice(i, i + JOB_DELIVERIES);
      const j = job('webhook', { accountId: first.accountId, subscriptionId: first.subscriptionId, deliveryIds: [first._id, ...rest.map((d) => d._id)] });
      jobs.push(outboxRecord(j.subject, j.payload, first._id));
    }
  }
  return jobs;
}

/** Records deliveries with their jobs in the caller's transaction. */
export async function recordDeliveries(deps: Pick<FanOutDeps, 'deliveries' | 'outbox'>, made: DeliveryDoc[], tx: Transaction): Promise<void> {
  if (!made.length) return;
  await deps.deliveries.create(made, tx);
  await deps.outbox.insertMany(deliveryJobs(made), { tx });
}

class AlreadyProcessed extends Error {}

/**
 * Fans a batch of facts out in one transaction (one store commit for the batch instead of one per
 * fact). When any fact of the batch was processed already (a redelivery), the transaction is dropped
 * and each fact goes through fanOut alone, which skips the processed ones.
 */
export async function fanOutBatch(deps: FanOutDeps, items: Array<{ fact: DomainFact & { type: WebhookEvent }; eventId: string }>): Promise<number> {
  const matching = new Map<string, Promise<Subscription[]>>();
  const made: DeliveryDoc[] = [];
  const ids: string[] = [];
  const now = deps.now();
  for (const { fact, eventId } of items) {
    const key = `${fact.accountId} ${fact.type}`;
    if (!matching.has(key)) matching.set(key, deps.subscriptions.activeMatching(fact.accountId, fact.type));
    const subs = await matching.get(key)!;
    if (!subs.length) continue;
    const body = webhookBody(eventId, fact.type, fact.occurredAt, eventData(fact));
    ids.push(eventId);
    for (const sub of subs) made.push(newDelivery(sub, eventId, fact.type, body, now));
  }
  if (!ids.length) return 0;
  try {
    await deps.store.transaction(async (tx) => {
      for (const id of ids) if (!(await deps.processed.record(id, { tx }))) throw new AlreadyProcessed();
      await recordDeliveries(deps, made, tx);
    });
  } catch (err) {
    if (!(err instanceof AlreadyProcessed)) throw err;
    let n = 0;
    for (const { fact, eventId } of items) n += await fanOut(deps, fact, eventId);
    return n;
  }
  deps.notifyOutbox();
  return made.length;
}

/**
 * Fans one fact out; `eventId` is the fact's message id (the same on every re-publication), which
 * becomes the body's `id` and the webhook-id header. Answers how many deliveries were created.
 */
export async function fanOut(deps: FanOutDeps, fact: DomainFact & { type: WebhookEvent }, eventId: string): Promise<number> {
  const subs = await deps.subscriptions.activeMatching(fact.accountId, fact.type);
  if (!subs.length) return 0;
  const body = webhookBody(eventId, fact.type, fact.occurredAt, eventData(fact));
  const now = deps.now();
  const result = await deps.processed.once(eventId, async (tx) => {
    const made = subs.map((sub) => newDelivery(sub, eventId, fact.type, body, now));
    await recordDeliveries(deps, made, tx);
    return made.length;
  });
  if (!result.firstTime) return 0;
  deps.notifyOutbox();
  return result.result;
}
