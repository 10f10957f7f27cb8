// One attempt of one delivery (API.md "Webhooks"): claim the stored delivery, post its body signed with
// the subscription's secrets through the outbound guard (15 s, no redirects), record the attempt and
// what follows from it (delivered, the next retry, failed; 410 and 5 days of failures disable the
// subscription). The claim makes a redelivered or duplicated job harmless: only its holder posts.
import { failedTooLong, signingSecrets, type DisabledReason } from '../domain/subscription';
import { judgeAttempt, parseRetryAfter } from '../domain/delivery-policy';
import { contentTypeHeader, webhookHeaders } from '../domain/webhook-message';
import type { AttemptRecord, DeliveryRepository } from '../store/deliveries';
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
  deliveries: DeliveryRepository;
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

const header = (headers: Record<string, string | string[] | undefined>, name: string): string | undefined => {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
};

export async function attemptDelivery(deps: AttemptDeps, accountId: string, deliveryId: string): Promise<AttemptOutcome> {
  const claimedAt = deps.now();
  const delivery = await deps.deliveries.claim(accountId, deliveryId, claimedAt, new Date(claimedAt.getTime() + deps.claimMs));
  if (!delivery) return 'NOT_DUE';
  const sub = await deps.subscriptions.get(accountId, delivery.subscriptionId);
  // A disabled or deleted subscription queues nothing: what it still had due is given up.
  if (!sub || !sub.active) {
    await deps.deliveries.abandon(delivery);
    return 'ABANDONED';
  }

  const at = deps.now();
  const headers = {
    ...webhookHeaders(delivery.eventId, delivery.body, signingSecrets(sub, at), at),
    'content-type': contentTypeHeader(sub.deliveryContentType),
  };
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
      responseBody: res.body.subarray(0, RESPONSE_LOG_BYTES).toString('utf8'),
    };
    retryAfterMs = parseRetryAfter(header(res.headers, 'retry-after'), deps.now());
  } catch (err) {
    attempt = { at, statusCode: null, durationMs: deps.now().getTime() - at.getTime(), error: err instanceof Error ? err.message : String(err), responseBody: null };
  }

  const verdict = judgeAttempt({ statusCode: attempt.statusCode, retryAfterMs, failures: delivery.failures, schedule: deps.retrySchedule });
  const now = deps.now();
  if (verdict.status === 'DELIVERED') {
    await deps.deliveries.settle(delivery, attempt, { status: 'DELIVERED', nextAttemptAt: null, failures: delivery.failures });
    if (sub.failingSince) await deps.subscriptions.markHealthy(accountId, sub.id);
    return 'DELIVERED';
  }
  const failures = delivery.failures + 1;
  if (verdict.status === 'RETRYING') {
    await deps.deliveries.settle(delivery, attempt, { status: 'RETRYING', nextAttemptAt: new Date(now.getTime() + verdict.retryInMs), failures });
  } else {
    await deps.deliveries.settle(delivery, attempt, { status: 'FAILED', nextAttemptAt: null, failures });
  }
  let disable: DisabledReason | undefined = verdict.status === 'FAILED' ? verdict.disableSubscription : undefined;
  if (!disable) {
    const failing = await deps.subscriptions.markFailing(accountId, sub.id, at);
    if (failing && failedTooLong(failing.failingSince, now)) disable = 'FAILING_FOR_5_DAYS';
  }
  if (disable && (await deps.subscriptions.disable(accountId, sub.id, disable, now))) deps.subscriptionsDisabled?.inc({ reason: disable });
  return verdict.status;
}
