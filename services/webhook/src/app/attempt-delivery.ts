// Attempts of deliveries (the API contract "Webhooks"), in batches: claim the due deliveries of a batch in one
// transaction, post each one signed with its subscription's secrets through the outbound guard (15 s, no
// redirects), then record a batch of attempts and what follows from them (delivered, the next retry,
// failed; 410 and 5 days of failures disable the subscription) in one write. The claim makes a
// redelivered or duplicated job harmless: only its holder posts and records.
import { randomUUID } from 'node:crypto';
import { failedTooLong, signingSecrets, type DisabledReason, type Subscription } from '../domain/subscription';
import { judgeAttempt, parseRetryAfter } from '../domain/delivery-policy';
import { contentTypeHeader, webhookHeaders } from '../domain/webhook-message';
import type { AttemptRecord, DeliveryDoc, DeliveryRepository, Settlement } from '../store/deliveries';
import type { SubscriptionRepository } from '../store/subscriptions';

/** A delivery succeeds on 2xx within this time. */
export const DELIVERY_TIMEOUT_MS = 15_000;
/** How much of a response the attempt log keeps. */
export const RESPONSE_LOG_BYTES = 2048;

/** The part of @mailer/outbound's client a delivery uses (a thrown OutboundError is a failed attempt; its message is safe to show). */
export interface OutboundClient {
  request(
    url: string,
    opts: { method: string; headers: Record<string, string>; body: string; timeoutMs: number; maxResponseBytes: number },
  ): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }>;
}

export interface AttemptDeps {
  deliveries: Pick<DeliveryRepository, 'claimAcrossAccounts' | 'settle'>;
  subscriptions: Pick<SubscriptionRepository, 'get' | 'disable' | 'markFailing' | 'markHealthy'>;
  outbound: OutboundClient;
  now: () => Date;
  /** How long a claim holds: longer than the request timeout, so only a dead worker's claim expires. */
  claimMs: number;
  /** Waits before the retries (ms); RETRY_SCHEDULE_MS unless the operator shortened it. */
  retrySchedule?: readonly number[];
  /** Counts the subscriptions these attempts disabled, by reason (server.ts). Absent: not counted. */
  subscriptionsDisabled?: { inc(labels: { reason: DisabledReason }): void };
}

export type AttemptOutcome = 'DELIVERED' | 'RETRYING' | 'FAILED' | 'ABANDONED' | 'NOT_DUE';

/** The deliveries of one subscription to claim. */
export interface ClaimRequest {
  accountId: string;
  subscriptionId: string;
  deliveryIds: string[];
}

/** What a claim took for one subscription: its deliveries, and the subscription as it is now (null: gone). */
export interface Claimed {
  subscription: Subscription | null;
  deliveries: DeliveryDoc[];
  claimId: string;
}

/** One attempt's (or one given-up delivery's) settlement, with what it means for its subscription. */
export interface Outcome extends Settlement {
  subscriptionId: string;
  outcome: Exclude<AttemptOutcome, 'NOT_DUE'>;
  /** The subscription must be disabled for this reason (410, or failing for 5 days already). */
  disable?: DisabledReason;
  /** The subscription had failed before this attempt (its state changes on a success). */
  wasFailing: boolean;
}

/**
 * Claims the due deliveries among the requested ones in one write, and reads each subscription
 * that got any. The rest are not due (delivered, failed, scheduled later, or held by another attempt).
 */
export async function claimDeliveries(deps: AttemptDeps, requests: ClaimRequest[]): Promise<Claimed[]> {
  const now = deps.now();
  const claimId = randomUUID();
  const claimed = await deps.deliveries.claimAcrossAccounts(requests, now, new Date(now.getTime() + deps.claimMs), claimId);
  return Promise.all(
    requests.map(async (r, i) => ({
      subscription: claimed[i].length ? await deps.subscriptions.get(r.accountId, r.subscriptionId) : null,
      deliveries: claimed[i],
      claimId,
    })),
  );
}

const header = (headers: Record<string, string | string[] | undefined>, name: string): string | undefined => {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
};

/** A claimed delivery given up without an attempt: its subscription is gone or disabled. */
export function abandoned(delivery: DeliveryDoc, claimId: string): Outcome {
  return {
    accountId: delivery.accountId,
    deliveryId: delivery._id,
    subscriptionId: delivery.subscriptionId,
    claimId,
    attempt: null,
    status: 'FAILED',
    nextAttemptAt: null,
    failures: delivery.failures,
    outcome: 'ABANDONED',
    wasFailing: false,
  };
}

/** One attempt of a claimed delivery of an active subscription: the post and its verdict, nothing stored yet. */
export async function attemptDelivery(deps: AttemptDeps, sub: Subscription, delivery: DeliveryDoc, claimId: string): Promise<Outcome> {
  const at = deps.now();
  const headers = webhookHeaders(delivery.eventId, delivery.body, signingSecrets(sub, at), at);
  headers['content-type'] = contentTypeHeader(sub.deliveryContentType);
  let attempt: AttemptRecord;
  let retryAfterMs: number | undefined;
  try {
    const res = await deps.outbound.request(sub.targetUrl, {
      method: 'POST',
      headers,
      body: delivery.body,
      timeoutMs: DELIVERY_TIMEOUT_MS,
      maxResponseBytes: RESPONSE_LOG_BYTES,
    });
    const ok = res.status >= 200 && res.status < 300;
    attempt = {
      at,
      statusCode: res.status,
      durationMs: deps.now().getTime() - at.getTime(),
      error: ok ? null : res.status >= 300 && res.status < 400 ? `redirect ${res.status} not followed` : `HTTP ${res.status}`,
      responseBody: res.body.toString('utf8'),
    };
    if (!ok) retryAfterMs = parseRetryAfter(header(res.headers, 'retry-after'), deps.now());
  } catch (err) {
    attempt = { at, statusCode: null, durationMs: deps.now().getTime() - at.getTime(), error: err instanceof Error ? err.message : String(err), responseBody: null };
  }

  const verdict = judgeAttempt({ statusCode: attempt.statusCode, retryAfterMs, failures: delivery.failures, schedule: deps.retrySchedule });
  const settled = { accountId: delivery.accountId, deliveryId: delivery._id, subscriptionId: delivery.subscriptionId, claimId, attempt, wasFailing: sub.failingSince !== null };
  if (verdict.status === 'DELIVERED') return { ...settled, status: 'DELIVERED', nextAttemptAt: null, failures: delivery.failures, outcome: 'DELIVERED' };
  const failures = delivery.failures + 1;
  const now = deps.now();
  // Known now, so that the subscription's next attempts wait for it: a 410, or failing for 5 days already.
  const disable = verdict.status === 'FAILED' && verdict.disableSubscription ? verdict.disableSubscription : failedTooLong(sub.failingSince, now) ? 'FAILING_FOR_5_DAYS' : undefined;
  if (verdict.status === 'RETRYING') {
    return { ...settled, status: 'RETRYING', nextAttemptAt: new Date(now.getTime() + verdict.retryInMs), failures, outcome: 'RETRYING', disable };
  }
  return { ...settled, status: 'FAILED', nextAttemptAt: null, failures, outcome: 'FAILED', disable };
}

/**
 * Records a batch of outcomes in one write, then what they mean for their subscriptions: healthy
 * again after a success, failing since the first failure after the last success (disabled once that is
 * 5 days ago), disabled on a 410. Outcomes are in the order the attempts ended.
 */
export async function settleDeliveries(deps: AttemptDeps, outcomes: Outcome[]): Promise<void> {
  await deps.deliveries.settle(outcomes);
  const bySubscription = new Map<string, Outcome[]>();
  for (const o of outcomes) {
    if (o.outcome === 'ABANDONED') continue;
    const list = bySubscription.get(o.subscriptionId);
    if (list) list.push(o);
    else bySubscription.set(o.subscriptionId, [o]);
  }
  for (const [id, list] of bySubscription) {
    const { accountId } = list[0];
    let lastSuccess = -1;
    list.forEach((o, i) => o.outcome === 'DELIVERED' && (lastSuccess = i));
    if (lastSuccess >= 0 && list[lastSuccess].wasFailing) await deps.subscriptions.markHealthy(accountId, id);
    const failed = list.slice(lastSuccess + 1);
    if (!failed.length) continue;
    let disable = failed.find((o) => o.disable === 'TARGET_GONE')?.disable;
    if (!disable) {
      const failing = await deps.subscriptions.markFailing(accountId, id, failed[0].attempt!.at);
      if (failing && failedTooLong(failing.failingSince, deps.now())) disable = 'FAILING_FOR_5_DAYS';
    }
    if (disable && (await deps.subscriptions.disable(accountId, id, disable, deps.now()))) deps.subscriptionsDisabled?.inc({ reason: disable });
  }
}
