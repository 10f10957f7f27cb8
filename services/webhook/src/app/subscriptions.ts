// Webhook subscription use cases (the API contract "Webhooks"): CRUD, secret rotation and the event list.
//
// Decisions (published in the OpenAPI document):
// - The target URL is checked when saved by the outbound guard (syntax, scheme, credentials, literal
//   address, what the name resolves to now: app/target-check.ts; `400 webhook_target_not_allowed`);
//   a host that resolves somewhere refused later makes the attempts fail (checked on the address
//   actually connected to).
// - `deliveryContentType` absent: application/json (the gateway refuses an explicit null).
// - `secret` is answered on create, GET of one and rotate only; lists and PUT leave it out.
// - PUT `active: true` on an inactive subscription re-enables it fresh; `active: false` disables it
//   (no disabledReason: the customer did it); absent keeps the state.
import { invalid, notFound } from '@mailer/kit';
import { DEFAULT_DELIVERY_CONTENT_TYPE, DELIVERY_CONTENT_TYPES, newSecret, type DeliveryContentType, type Subscription } from '../domain/subscription';
import { parseSubscriptionEvent, WEBHOOK_EVENTS, type SubscriptionEvent } from '../domain/webhook-events';
import type { SubscriptionRepository } from '../store/subscriptions';

/** Longest target URL accepted (published in the OpenAPI document). */
export const TARGET_URL_MAX = 2048;

/** The save-time URL check (app/target-check.ts: the outbound guard with the service's settings). */
export type TargetCheck = (url: string) => Promise<{ ok: true; url: URL } | { ok: false; reason: string }>;

export interface SubscriptionDeps {
  subscriptions: SubscriptionRepository;
  checkTarget: TargetCheck;
  now(): Date;
  newId(): string;
}

export interface SubscriptionRequest {
  targetUrl: string;
  event: string;
  /** Absent: application/json. */
  deliveryContentType?: string;
  /** PUT only; absent keeps the state. */
  active?: boolean;
}

export const subscriptionNotFound = (id: string) => notFound('webhook_subscription_not_found', `no webhook subscription with id ${id} exists in the account`);

interface Values {
  targetUrl: string;
  event: SubscriptionEvent;
  deliveryContentType: DeliveryContentType;
}

/** The values to store, or the DomainError naming the first rule broken. */
export async function subscriptionValues(req: SubscriptionRequest, checkTarget: TargetCheck): Promise<Values> {
  const rawUrl = typeof req.targetUrl === 'string' ? req.targetUrl.trim() : '';
  if (!rawUrl || rawUrl.length > TARGET_URL_MAX) {
    throw invalid('validation_failed', `targetUrl is required (at most ${TARGET_URL_MAX} characters)`, [{ path: 'body.targetUrl', problem: 'required, at most 2048 characters' }]);
  }
  const event = parseSubscriptionEvent(req.event ?? '');
  if (!event) {
    throw invalid('unknown_webhook_event', `unknown webhook event: use * or one of GET /webhook-events`, [{ path: 'body.event', problem: 'not a webhook event' }]);
  }
  const type = req.deliveryContentType ?? DEFAULT_DELIVERY_CONTENT_TYPE;
  if (!(DELIVERY_CONTENT_TYPES as readonly string[]).includes(type)) {
    throw invalid('validation_failed', 'deliveryContentType must be application/json or text/plain', [{ path: 'body.deliveryContentType', problem: 'must be application/json or text/plain' }]);
  }
  const checked = await checkTarget(rawUrl);
  if (!checked.ok) {
    throw invalid('webhook_target_not_allowed', `the target URL is not allowed: ${checked.reason}`, [{ path: 'body.targetUrl', problem: checked.reason }]);
  }
  return { targetUrl: checked.url.href, event, deliveryContentType: type as DeliveryContentType };
}

export const listWebhookEvents = (): string[] => [...WEBHOOK_EVENTS];

export const listSubscriptions = (deps: SubscriptionDeps, accountId: string) => deps.subscriptions.list(accountId);

export async function getSubscription(deps: SubscriptionDeps, accountId: string, id: string): Promise<Subscription> {
  const sub = await deps.subscriptions.get(accountId, id);
  if (!sub) throw subscriptionNotFound(id);
  return sub;
}

export async function createSubscription(deps: SubscriptionDeps, accountId: string, req: SubscriptionRequest): Promise<Subscription> {
  const values = await subscriptionValues(req, deps.checkTarget);
  const now = deps.now();
  return deps.subscriptions.create({
    id: deps.newId(),
    accountId,
    ...values,
    active: true,
    secret: newSecret(),
    previousSecret: null,
    previousSecretExpiresAt: null,
    disabledReason: null,
    createdAt: now,
    updatedAt: now,
    failingSince: null,
  });
}

export async function updateSubscription(deps: SubscriptionDeps, accountId: string, id: string, req: SubscriptionRequest): Promise<Subscription> {
  const values = await subscriptionValues(req, deps.checkTarget);
  const updated = await deps.subscriptions.update(accountId, id, { ...values, active: req.active, updatedAt: deps.now() });
  if (!updated) throw subscriptionNotFound(id);
  return updated;
}

export async function deleteSubscription(deps: SubscriptionDeps, accountId: string, id: string): Promise<void> {
  if (!(await deps.subscriptions.delete(accountId, id))) throw subscriptionNotFound(id);
}

/** The new secret; the previous one keeps signing for 24 h. */
export async function rotateSecret(deps: SubscriptionDeps, accountId: string, id: string): Promise<string> {
  const rotated = await deps.subscriptions.rotateSecret(accountId, id, newSecret(), deps.now());
  if (!rotated) throw subscriptionNotFound(id);
  return rotated.secret;
}

/** Operator only: every signing secret re-sealed under the current key, across accounts (store/subscriptions.ts). */
export const resealSecrets = (deps: Pick<SubscriptionDeps, 'subscriptions'>) => deps.subscriptions.resealAll();
