import type { Router } from 'express';
import type { ServiceClients } from '../clients';
import { deliveryPageJson, listDeliveriesToProto, subscriptionJson, subscriptionToProto } from '../mapping/webhooks';
import { accepted, created, mount, noContent, ok, operation, type Operation } from './operation';

// Webhooks (webhook service): one operation per row of the API contract's "Webhooks" table. Subscriptions are
// its WebhookSubscriptionService, deliveries its WebhookDeliveryService.

export const webhookOperations: Operation[] = [
  operation('get', '/webhook-events', 'listWebhookEvents', async ({ clients, accountId, call }) =>
    ok({ events: (await clients.webhookSubscriptions.listWebhookEvents({ accountId }, call)).events }),
  ),
  operation('get', '/webhook-subscriptions', 'listWebhookSubscriptions', async ({ clients, accountId, call }) =>
    ok({ items: (await clients.webhookSubscriptions.listWebhookSubscriptions({ accountId }, call)).items.map(subscriptionJson) }),
  ),
  operation('post', '/webhook-subscriptions', 'createWebhookSubscription', async ({ clients, accountId, body, call }) => {
    const sub = subscriptionJson((await clients.webhookSubscriptions.createWebhookSubscription({ accountId, subscription: subscriptionToProto(body) }, call)).subscription);
    return created(sub, `/webhook-subscriptions/${sub.id}`);
  }),
  operation('get', '/webhook-subscriptions/:subscriptionId', 'getWebhookSubscription', async ({ clients, accountId, params, call }) =>
    ok(subscriptionJson((await clients.webhookSubscriptions.getWebhookSubscription({ accountId, subscriptionId: params.subscriptionId }, call)).subscription)),
  ),
  operation('put', '/webhook-subscriptions/:subscriptionId', 'updateWebhookSubscription', async ({ clients, accountId, params, body, call }) =>
    ok(
      subscriptionJson(
        (await clients.webhookSubscriptions.updateWebhookSubscription({ accountId, subscriptionId: params.subscriptionId, subscription: subscriptionToProto(body) }, call)).subscription,
      ),
    ),
  ),
  operation('delete', '/webhook-subscriptions/:subscriptionId', 'deleteWebhookSubscription', async ({ clients, accountId, params, call }) => {
    await clients.webhookSubscriptions.deleteWebhookSubscription({ accountId, subscriptionId: params.subscriptionId }, call);
    return noContent();
  }),
  operation('post', '/webhook-subscriptions/:subscriptionId/rotate-secret', 'rotateWebhookSecret', async ({ clients, accountId, params, call }) =>
    ok({ secret: (await clients.webhookSubscriptions.rotateWebhookSecret({ accountId, subscriptionId: params.subscriptionId }, call)).secret }),
  ),
  operation('get', '/webhook-subscriptions/:subscriptionId/deliveries', 'listWebhookDeliveries', async ({ clients, accountId, params, query, call }) =>
    ok(deliveryPageJson(await clients.webhookDeliveries.listDeliveries(listDeliveriesToProto(accountId, params.subscriptionId, query), call))),
  ),
  operation(
    'post',
    '/webhook-subscriptions/:subscriptionId/deliveries/:deliveryId/redeliver',
    'redeliverWebhookDelivery',
    async ({ clients, accountId, params, call }) => {
      await clients.webhookDeliveries.redeliver({ accountId, subscriptionId: params.subscriptionId, deliveryId: params.deliveryId }, call);
      return accepted({ deliveryId: params.deliveryId });
    },
  ),
  operation('post', '/webhook-subscriptions/:subscriptionId/test', 'sendWebhookTestEvent', async ({ clients, accountId, params, call }) =>
    accepted({ deliveryId: (await clients.webhookDeliveries.sendTestEvent({ accountId, subscriptionId: params.subscriptionId }, call)).deliveryId }),
  ),
];

export const webhookRoutes = (clients: ServiceClients): Router => mount(webhookOperations, clients);
