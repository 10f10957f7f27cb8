import type { Router } from 'express';
import type { ServiceClients } from '../clients';
import {
  addFieldToProto,
  addTopicToProto,
  fieldCatalogJson,
  fieldFormsJson,
  fieldJson,
  fieldUsageReportJson,
  tagJson,
  topicJson,
  updateFieldToProto,
  updateTopicToProto,
} from '../mapping/catalog';
import { created, mount, noContent, ok, operation, type Operation } from './operation';

// Fields, tags, topics (subscriber service): one operation per row of the API contract's table.

export const fieldOperations: Operation[] = [
  operation('get', '/fields', 'listFields', async ({ clients, accountId, query, call }) =>
    ok(fieldCatalogJson((await clients.subscriber.listFields({ accountId, includeArchived: query.includeArchived }, call)).fields)),
  ),

  operation('post', '/fields', 'addField', async ({ clients, accountId, body, call }) => {
    const field = fieldJson((await clients.subscriber.addField(addFieldToProto(accountId, body), call)).field);
    if (!('fieldId' in field)) throw new Error('the service answered AddField with a built-in field');
    return created(field, `/fields/${field.fieldId}`);
  }),

  operation('get', '/fields/:fieldId', 'getField', async ({ clients, accountId, params, call }) =>
    ok(fieldJson((await clients.subscriber.getField({ accountId, fieldId: params.fieldId }, call)).field)),
  ),

  operation('patch', '/fields/:fieldId', 'updateField', async ({ clients, accountId, params, body, call }) =>
    ok(fieldJson((await clients.subscriber.updateField(updateFieldToProto(accountId, params.fieldId, body), call)).field)),
  ),

  operation('post', '/fields/:fieldId/archive', 'archiveField', async ({ clients, accountId, params, call }) =>
    ok(fieldJson((await clients.subscriber.archiveField({ accountId, fieldId: params.fieldId }, call)).field)),
  ),

  operation('post', '/fields/:fieldId/restore', 'restoreField', async ({ clients, accountId, params, call }) =>
    ok(fieldJson((await clients.subscriber.restoreField({ accountId, fieldId: params.fieldId }, call)).field)),
  ),

  operation('get', '/fields/:fieldId/usage', 'getFieldUsage', async ({ clients, accountId, params, call }) =>
    ok(fieldUsageReportJson((await clients.subscriber.getFieldUsage({ accountId, fieldId: params.fieldId }, call)).report)),
  ),

  operation('get', '/fields/:fieldId/forms', 'listFieldForms', async ({ clients, accountId, params, call }) =>
    ok(fieldFormsJson((await clients.subscriber.listFieldForms({ accountId, fieldId: params.fieldId }, call)).forms)),
  ),

  operation('delete', '/fields/:fieldId', 'deleteField', async ({ clients, accountId, params, call }) => {
    await clients.subscriber.deleteField({ accountId, fieldId: params.fieldId }, call);
    return noContent();
  }),
];

export const tagOperations: Operation[] = [
  operation('get', '/tags', 'listTags', async ({ clients, accountId, call }) =>
    ok({ items: (await clients.subscriber.listTags({ accountId }, call)).items.map(tagJson) }),
  ),

  operation('post', '/tags', 'addTag', async ({ clients, accountId, body, call }) => {
    const tag = tagJson((await clients.subscriber.addTag({ accountId, name: body.name }, call)).tag);
    return created(tag, `/tags/${tag.id}`);
  }),

  operation('get', '/tags/:tagId', 'getTag', async ({ clients, accountId, params, call }) =>
    ok(tagJson((await clients.subscriber.getTag({ accountId, tagId: params.tagId }, call)).tag)),
  ),

  operation('put', '/tags/:tagId', 'renameTag', async ({ clients, accountId, params, body, call }) =>
    ok(tagJson((await clients.subscriber.renameTag({ accountId, tagId: params.tagId, name: body.name }, call)).tag)),
  ),

  operation('delete', '/tags/:tagId', 'deleteTag', async ({ clients, accountId, params, call }) => {
    await clients.subscriber.deleteTag({ accountId, tagId: params.tagId }, call);
    return noContent();
  }),
];

export const topicOperations: Operation[] = [
  operation('get', '/topics', 'listTopics', async ({ clients, accountId, call }) =>
    ok({ items: (await clients.subscriber.listTopics({ accountId }, call)).items.map(topicJson) }),
  ),

  operation('post', '/topics', 'addTopic', async ({ clients, accountId, body, call }) => {
    const topic = topicJson((await clients.subscriber.addTopic(addTopicToProto(accountId, body), call)).topic);
    return created(topic, `/topics/${topic.id}`);
  }),

  operation('get', '/topics/:topicId', 'getTopic', async ({ clients, accountId, params, call }) =>
    ok(topicJson((await clients.subscriber.getTopic({ accountId, topicId: params.topicId }, call)).topic)),
  ),

  operation('patch', '/topics/:topicId', 'updateTopic', async ({ clients, accountId, params, body, call }) =>
    ok(topicJson((await clients.subscriber.updateTopic(updateTopicToProto(accountId, params.topicId, body), call)).topic)),
  ),

  operation('delete', '/topics/:topicId', 'deleteTopic', async ({ clients, accountId, params, call }) => {
    await clients.subscriber.deleteTopic({ accountId, topicId: params.topicId }, call);
    return noContent();
  }),
];

export const catalogRoutes = (clients: ServiceClients): Router => mount([...fieldOperations, ...tagOperations, ...topicOperations], clients);
