// Webhook subscriptions and deliveries (webhook service) between REST and gRPC. JSON `null` and
// absence of optional response members: an absent proto member is answered as `null`.
import { protoEnum } from '@mailer/kit';
import { webhookDeliveriesV1, type webhookSubscriptionsV1 } from '@mailer/proto';
import type { QueryOf, Schemas } from '../openapi/types';
import { int64, present } from './numbers';

export const DeliveryStatuses = protoEnum(webhookDeliveriesV1.DeliveryStatus, 'DELIVERY_STATUS_');

/** Create and update (PUT adds `active`). The OpenAPI schema refuses an explicit null deliveryContentType. */
export const subscriptionToProto = (b: Schemas['UpdateWebhookSubscriptionRequest']): webhookSubscriptionsV1.WebhookSubscriptionInput => ({
  targetUrl: b.targetUrl,
  event: b.event,
  deliveryContentType: b.deliveryContentType,
  active: b.active,
});

/** The record as answered; `secret` only when the service sent it (create, GET of one). */
export function subscriptionJson(s: webhookSubscriptionsV1.WebhookSubscription | undefined) {
  const sub = present(s, 'the subscription');
  return {
    id: sub.id,
    targetUrl: sub.targetUrl,
    event: sub.event,
    deliveryContentType: sub.deliveryContentType,
    active: sub.active,
    ...(sub.secret !== undefined ? { secret: sub.secret } : {}),
    createdAt: sub.createdAt,
    updatedAt: sub.updatedAt,
    disabledReason: sub.disabledReason ?? null,
  };
}

export const listDeliveriesToProto = (accountId: string, subscriptionId: string, q: QueryOf<'listWebhookDeliveries'>): webhookDeliveriesV1.ListDeliveriesRequest => ({
  accountId,
  subscriptionId,
  status: DeliveryStatuses.toProtoOrUnspecified(q.status),
  pageNumber: q.pageNumber,
  pageSize: q.pageSize,
});

const deliveryJson = (d: webhookDeliveriesV1.Delivery) => ({
  deliveryId: d.deliveryId,
  eventId: d.eventId,
  type: d.type,
  status: DeliveryStatuses.fromProto(d.status),
  attempts: d.attempts.map((a) => ({
    at: a.at,
    statusCode: a.statusCode ?? null,
    durationMs: a.durationMs,
    error: a.error ?? null,
    responseBody: a.responseBody ?? null,
  })),
  nextAttemptAt: d.nextAttemptAt ?? null,
  createdAt: d.createdAt,
});

export const deliveryPageJson = (page: webhookDeliveriesV1.ListDeliveriesResponse) => ({
  items: page.items.map(deliveryJson),
  pageNumber: page.pageNumber,
  pageSize: page.pageSize,
  totalItems: int64(page.totalItems),
  totalPages: page.totalPages,
});
