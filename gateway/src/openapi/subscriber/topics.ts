import { instant, ok, ref, schemaRef, uuid } from '../common';
import { body, created, idempotencyKey, noContent, object, responses } from '../operations';
import { int64, MAX } from './shared';

/** Topics subscribers join; one of them is the account's default topic. */

export const topicPaths = {
  '/topics': {
    get: {
      tags: ['Topics'],
      operationId: 'listTopics',
      summary: 'Topics of the account',
      description: 'In creation order. Every account has exactly one default topic at all times: from the account\'s first use on there is a topic labelled `Newsletter` (active, `isDefault: true`, no subscribers) unless the flag was moved to another topic.',
      responses: responses('get', { '200': ok('The topics.', schemaRef('TopicList')) }, {}),
    },
    post: {
      tags: ['Topics'],
      operationId: 'addTopic',
      summary: 'Create a topic',
      description:
        'A new topic is not the default unless the request says `isDefault: true`: then it becomes the account\'s default topic (the one subscribers join when created without `topicIds`) and the previous default stops being it. `enrollExistingSubscribers: true` subscribes every existing subscriber to the new topic.',
      parameters: [idempotencyKey],
      requestBody: body('AddTopic'),
      responses: responses('post', { '201': created('Created.', 'Topic') }, {}),
    },
  },
  '/topics/{topicId}': {
    get: {
      tags: ['Topics'],
      operationId: 'getTopic',
      summary: 'Read one topic',
      parameters: [ref('parameters', 'TopicId')],
      responses: responses('get', { '200': ok('The topic.', schemaRef('Topic')) }, { 400: ['invalid_uuid'], 404: ['topic_not_found'] }),
    },
    patch: {
      tags: ['Topics'],
      operationId: 'updateTopic',
      summary: 'Change a topic',
      description:
        'Only the members sent change; `description: null` clears it. `isDefault: true` makes this topic the default (the previous default stops being it). The default topic cannot be un-defaulted or deactivated (`409 topic_is_default`: make another topic the default first), and an inactive topic cannot become the default (`400 topic_inactive`). Deactivating a topic keeps its subscribers; nobody can join it until it is active again.',
      parameters: [ref('parameters', 'TopicId')],
      requestBody: body('UpdateTopic'),
      responses: responses('patch', { '200': ok('The topic after the change.', schemaRef('Topic')) }, { 400: ['invalid_uuid', 'topic_inactive'], 404: ['topic_not_found'], 409: ['topic_is_default'] }),
    },
    delete: {
      tags: ['Topics'],
      operationId: 'deleteTopic',
      summary: 'Delete a topic',
      description:
        'Subscriptions and opt-outs of the topic go with it. The default topic cannot be deleted (`409 topic_is_default`: make another topic the default first). Nor can a topic an RSS newsletter or an automation\'s `SEND_EMAIL` step sends to (`409 topic_in_use`; `details` lists them as `rssNewsletters.<id>` and `automations.<id>`): change or delete them first. When the rss or messaging service does not answer, `503 service_unavailable`: the delete cannot be proven safe and nothing is deleted.',
      parameters: [ref('parameters', 'TopicId')],
      responses: responses('delete', { '204': noContent('Deleted.') }, { 400: ['invalid_uuid'], 404: ['topic_not_found'], 409: ['topic_is_default', 'topic_in_use'] }),
    },
  },
};

export const topicParameters = {
  TopicId: { name: 'topicId', in: 'path', required: true, schema: uuid },
};

export const topicSchemas = {
  Topic: object(['id', 'label', 'description', 'active', 'isDefault', 'subscriberCount', 'createdAt'], {
    id: uuid,
    label: { type: 'string' },
    description: { type: ['string', 'null'] },
    active: { type: 'boolean' },
    isDefault: { type: 'boolean', description: 'The topic subscribers join when created without topicIds; exactly one per account at all times (`Newsletter` until the flag is moved).' },
    subscriberCount: { ...int64, description: 'Current subscribers of the topic.' },
    createdAt: instant,
  }),
  TopicList: object(['items'], { items: { type: 'array', items: schemaRef('Topic') } }),
  AddTopic: object(['label'], {
    label: { type: 'string', minLength: 1, maxLength: MAX.topicLabel, description: 'Shown to readers; trimmed, 1-255 characters.' },
    description: { type: ['string', 'null'], maxLength: MAX.description },
    enrollExistingSubscribers: { type: 'boolean', default: false },
    isDefault: { type: 'boolean', default: false, description: 'Make the new topic the account\'s default (the flag moves from the previous default).' },
  }),
  UpdateTopic: object([], {
    label: { type: 'string', minLength: 1, maxLength: MAX.topicLabel },
    description: { type: ['string', 'null'], maxLength: MAX.description, description: 'null clears it.' },
    active: { type: 'boolean' },
    isDefault: { type: 'boolean' },
  }),
};
