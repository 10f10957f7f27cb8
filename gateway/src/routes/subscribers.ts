import type { Router } from 'express';
import { GATEWAY_DEADLINES } from '@mailer/kit';
import type { ServiceClients } from '../clients';
import { SubscriberStatuses } from '../mapping/enums';
import { fieldValueEntryJson, fieldValueToProto } from '../mapping/field-values';
import {
  addSubscriberToProto,
  listSubscribersToProto,
  pageJson,
  replaceSubscriberDataToProto,
  replaceSubscriberTopicsToProto,
  subscriberDataJson,
  subscriberJson,
  subscriberTopicsJson,
  syncResultsJson,
  syncToProto,
  taggingAddResultJson,
  taggingRemovalResultJson,
  taggingToProto,
  type RefusedRow,
} from '../mapping/subscribers';
import { present } from '../mapping/numbers';
import { created, mount, noContent, ok, operation, type Operation } from './operation';

// Subscribers (subscriber service): one operation per row of the API contract's table. Literal paths
// (sync, tags/add, by-email) come before `/subscribers/:subscriberId`.

export const subscriberOperations: Operation[] = [
  // With segmentId the subscriber service waits for the segment service's member page: a longer deadline.
  operation('get', '/subscribers', 'listSubscribers', async ({ clients, accountId, query, call }) =>
    ok(pageJson(await clients.subscriber.listSubscribers(listSubscribersToProto(accountId, query), query.segmentId ? { ...call, deadlineMs: GATEWAY_DEADLINES.segmentMembers } : call))),
  ),

  operation('post', '/subscribers', 'addSubscriber', async ({ clients, accountId, body, call }) => {
    const { subscriber } = await clients.subscriber.addSubscriber(addSubscriberToProto(accountId, body), call);
    const json = subscriberJson(present(subscriber, 'the subscriber'));
    return created(json, `/subscribers/${json.id}`);
  }),

  operation('post', '/subscribers/sync', 'syncSubscribers', async ({ clients, accountId, body, itemErrors, call }) => {
    const refusedIndexes = new Set(itemErrors.map((e) => e.index));
    const refused: RefusedRow[] = itemErrors.map(({ index, error }) => {
      // a refused row is any JSON value, whatever its schema type says
      const email = (body.subscribers[index] as unknown as { email?: unknown } | null)?.email;
      // as the service answers a row it cannot read: the email as sent, cut to a sane length
      return { index, email: typeof email === 'string' ? email.slice(0, 264) : '', errorId: error.errorId, message: error.message };
    });
    const accepted = body.subscribers.flatMap((row, index) => (refusedIndexes.has(index) ? [] : [{ index, row }]));
    const { request, indexes } = syncToProto(accountId, body.mode, accepted);
    const response = accepted.length ? await clients.subscriber.syncSubscribers(request, call) : undefined;
    return ok(syncResultsJson(response, indexes, refused));
  }),

  operation('get', '/subscribers/by-email/:email', 'getSubscriberByEmail', async ({ clients, accountId, params, call }) => {
    const { subscriber } = await clients.subscriber.getSubscriberByEmail({ accountId, email: params.email }, call);
    return ok(subscriberJson(present(subscriber, 'the subscriber')));
  }),

  operation('post', '/subscribers/tags/add', 'addTagsToSubscribers', async ({ clients, accountId, body, call }) =>
    ok(taggingAddResultJson(await clients.subscriber.addTagsToSubscribers(taggingToProto(accountId, body), call))),
  ),

  operation('post', '/subscribers/tags/remove', 'removeTagsFromSubscribers', async ({ clients, accountId, body, call }) =>
    ok(taggingRemovalResultJson(await clients.subscriber.removeTagsFromSubscribers(taggingToProto(accountId, body), call))),
  ),

  operation('get', '/subscribers/:subscriberId', 'getSubscriber', async ({ clients, accountId, params, call }) => {
    const { subscriber } = await clients.subscriber.getSubscriber({ accountId, subscriberId: params.subscriberId }, call);
    return ok(subscriberJson(present(subscriber, 'the subscriber')));
  }),

  operation('delete', '/subscribers/:subscriberId', 'deleteSubscriber', async ({ clients, accountId, params, call }) => {
    await clients.subscriber.deleteSubscriber({ accountId, subscriberId: params.subscriberId }, call);
    return noContent();
  }),

  operation('get', '/subscribers/:subscriberId/data', 'getSubscriberData', async ({ clients, accountId, params, call }) =>
    ok(subscriberDataJson((await clients.subscriber.getSubscriberData({ accountId, subscriberId: params.subscriberId }, call)).data)),
  ),

  operation('put', '/subscribers/:subscriberId/data', 'replaceSubscriberData', async ({ clients, accountId, params, body, call }) =>
    ok(subscriberDataJson((await clients.subscriber.replaceSubscriberData(replaceSubscriberDataToProto(accountId, params.subscriberId, body), call)).data)),
  ),

  operation('put', '/subscribers/:subscriberId/email', 'replaceSubscriberEmail', async ({ clients, accountId, params, body, call }) =>
    ok(subscriberDataJson((await clients.subscriber.replaceSubscriberEmail({ accountId, subscriberId: params.subscriberId, email: body.email }, call)).data)),
  ),

  operation('put', '/subscribers/:subscriberId/first-name', 'replaceSubscriberFirstName', async ({ clients, accountId, params, body, call }) => {
    const request = { accountId, subscriberId: params.subscriberId, firstName: body.firstName ?? undefined };
    return ok(subscriberDataJson((await clients.subscriber.replaceSubscriberFirstName(request, call)).data));
  }),

  operation('put', '/subscribers/:subscriberId/status', 'replaceSubscriberStatus', async ({ clients, accountId, params, body, call }) => {
    const request = { accountId, subscriberId: params.subscriberId, subscriberStatus: SubscriberStatuses.toProto(body.subscriberStatus) };
    return ok(subscriberDataJson((await clients.subscriber.replaceSubscriberStatus(request, call)).data));
  }),

  operation('get', '/subscribers/:subscriberId/topics', 'getSubscriberTopics', async ({ clients, accountId, params, call }) =>
    ok(subscriberTopicsJson((await clients.subscriber.getSubscriberTopics({ accountId, subscriberId: params.subscriberId }, call)).topics)),
  ),

  operation('put', '/subscribers/:subscriberId/topics', 'replaceSubscriberTopics', async ({ clients, accountId, params, body, call }) =>
    ok(subscriberTopicsJson((await clients.subscriber.replaceSubscriberTopics(replaceSubscriberTopicsToProto(accountId, params.subscriberId, body), call)).topics)),
  ),

  operation(
    'post',
    '/subscribers/:subscriberId/topics/:topicId/opt-out',
    'optOutOfTopic',
    async ({ clients, accountId, params, body, call }) => {
      const request = { accountId, subscriberId: params.subscriberId, topicId: params.topicId, source: body?.source };
      return ok(subscriberTopicsJson((await clients.subscriber.optOutOfTopic(request, call)).topics));
    },
  ),

  operation('get', '/subscribers/:subscriberId/field-values', 'listFieldValues', async ({ clients, accountId, params, call }) => {
    const { values } = await clients.subscriber.listFieldValues({ accountId, subscriberId: params.subscriberId }, call);
    return ok({ values: values.map(fieldValueEntryJson) });
  }),

  operation('put', '/subscribers/:subscriberId/field-values/:fieldId', 'setFieldValue', async ({ clients, accountId, params, body, call }) => {
    const request = { accountId, subscriberId: params.subscriberId, fieldId: params.fieldId, value: fieldValueToProto(body) };
    return ok(fieldValueEntryJson(present((await clients.subscriber.setFieldValue(request, call)).value, 'the field value')));
  }),

  operation('delete', '/subscribers/:subscriberId/field-values/:fieldId', 'deleteFieldValue', async ({ clients, accountId, params, call }) => {
    await clients.subscriber.deleteFieldValue({ accountId, subscriberId: params.subscriberId, fieldId: params.fieldId }, call);
    return noContent();
  }),
];

export const subscriberRoutes = (clients: ServiceClients): Router => mount(subscriberOperations, clients);
