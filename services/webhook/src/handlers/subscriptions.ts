// WebhookSubscriptionService: gRPC <-> use cases (app/subscriptions.ts), one use case per RPC.
import { accountOf, invalid, type AsyncHandlers } from '@mailer/kit';
import type { webhookSubscriptionsV1 } from '@mailer/proto';
import {
  createSubscription,
  deleteSubscription,
  getSubscription,
  listSubscriptions,
  listWebhookEvents,
  rotateSecret,
  updateSubscription,
  type SubscriptionDeps,
  type SubscriptionRequest,
} from '../app/subscriptions';
import type { Subscription } from '../domain/subscription';

/** The record as answered; the secret only where the API contract shows it. */
export function subscriptionToProto(s: Subscription, withSecret: boolean): webhookSubscriptionsV1.WebhookSubscription {
  return {
    id: s.id,
    targetUrl: s.targetUrl,
    event: s.event,
    deliveryContentType: s.deliveryContentType,
    active: s.active,
    secret: withSecret ? s.secret : undefined,
    disabledReason: s.disabledReason ?? undefined,
    createdAt: s.createdAt.toISOString(),
    updatedAt: s.updatedAt.toISOString(),
  };
}

function input(s: webhookSubscriptionsV1.WebhookSubscriptionInput | undefined): SubscriptionRequest {
  if (!s) throw invalid('validation_failed', 'subscription is required', [{ path: 'body', problem: 'required' }]);
  return { targetUrl: s.targetUrl, event: s.event, deliveryContentType: s.deliveryContentType, active: s.active };
}

/** Ids are compared lowercase (paths accept UUIDs in any case). */
const idOf = (id: string) => (id ?? '').toLowerCase();

export function subscriptionHandlers(deps: SubscriptionDeps): AsyncHandlers<webhookSubscriptionsV1.WebhookSubscriptionServiceServer> {
  return {
    listWebhookEvents: async () => ({ events: listWebhookEvents() }),
    listWebhookSubscriptions: async (req) => ({ items: (await listSubscriptions(deps, accountOf(req))).map((s) => subscriptionToProto(s, false)) }),
    getWebhookSubscription: async (req) => ({ subscription: subscriptionToProto(await getSubscription(deps, accountOf(req), idOf(req.subscriptionId)), true) }),
    createWebhookSubscription: async (req) => ({ subscription: subscriptionToProto(await createSubscription(deps, accountOf(req), input(req.subscription)), true) }),
    updateWebhookSubscription: async (req) => ({
      subscription: subscriptionToProto(await updateSubscription(deps, accountOf(req), idOf(req.subscriptionId), input(req.subscription)), false),
    }),
    deleteWebhookSubscription: async (req) => {
      await deleteSubscription(deps, accountOf(req), idOf(req.subscriptionId));
      return {};
    },
    rotateWebhookSecret: async (req) => ({ secret: await rotateSecret(deps, accountOf(req), idOf(req.subscriptionId)) }),
  };
}
