import { ACCOUNT_NAMES_BUCKET } from '@mailer/nats/client';
import { MAX_STATE_AGE_MS } from '../ratelimit/policies';

const HOUR = 3_600_000;

/**
 * JetStream KV buckets shared by every gateway replica (history 1). Key layouts:
 *   gateway-accounts     account.<accountId> -> AccountRecord; apikey.<hmac hex> -> {accountId}   (src/accounts/accounts.ts)
 *   account-names        <accountId> -> {name}: the one thing other processes may read (the form     (src/accounts/accounts.ts;
 *                        service's confirm page names the account)                                    @mailer/nats accountNames)
 *   gateway-rate-limits  account.<accountId>.default | account.<accountId>.events | address.<client address>
 *                        -> {<limit name>: bucket TAT ms | window slot counts}                       (src/ratelimit/limiter.ts)
 *   gateway-idempotency  <accountId>.<sha256(Idempotency-Key) hex> -> in-flight lease | stored response (src/idempotency/store.ts)
 *   gateway-event-keys   <accountId>.<sha256(idempotencyKey) hex> -> {eventId, acceptedAt}           (src/events/publisher.ts)
 * Reads are never direct gets: a lagging replica of a clustered bucket could still show a rotated key.
 * TTLs: rate-limit state outlives its longest window, so an expired entry equals a full bucket.
 */
export const BUCKETS = {
  accounts: { name: 'gateway-accounts', ttlMs: 0, storage: 'file' },
  accountNames: { name: ACCOUNT_NAMES_BUCKET, ttlMs: 0, storage: 'file' },
  // Memory storage: budgets lost with the NATS server simply refill, and every request writes here.
  rateLimits: { name: 'gateway-rate-limits', ttlMs: MAX_STATE_AGE_MS + HOUR, storage: 'memory' },
  idempotency: { name: 'gateway-idempotency', ttlMs: 24 * HOUR, storage: 'file' },
  eventKeys: { name: 'gateway-event-keys', ttlMs: 7 * 24 * HOUR, storage: 'file' },
} as const;
