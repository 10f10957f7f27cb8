import { instant, ok, ref, schemaRef, uuid } from '../common';
import { body, created, idempotencyKey, noContent, object, responses } from '../operations';
import { int64, MAX } from './shared';

/** Tags: account-wide labels put on subscribers. */

export const tagPaths = {
  '/tags': {
    get: {
      tags: ['Tags'],
      operationId: 'listTags',
      summary: 'Tags of the account',
      description: 'Ordered by name.',
      responses: responses('get', { '200': ok('The tags.', schemaRef('TagList')) }, {}),
    },
    post: {
      tags: ['Tags'],
      operationId: 'addTag',
      summary: 'Create a tag',
      description: 'The name is trimmed (1-100 characters) and unique in the account ignoring case (`409 tag_name_exists`).',
      parameters: [idempotencyKey],
      requestBody: body('AddTag'),
      responses: responses('post', { '201': created('Created.', 'Tag') }, { 409: ['tag_name_exists'] }),
    },
  },
  '/tags/{tagId}': {
    get: {
      tags: ['Tags'],
      operationId: 'getTag',
      summary: 'Read one tag',
      parameters: [ref('parameters', 'TagId')],
      responses: responses('get', { '200': ok('The tag.', schemaRef('Tag')) }, { 400: ['invalid_uuid'], 404: ['tag_not_found'] }),
    },
    put: {
      tags: ['Tags'],
      operationId: 'renameTag',
      summary: 'Rename a tag',
      description: 'The id and the subscribers\' assignments stay.',
      parameters: [ref('parameters', 'TagId')],
      requestBody: body('RenameTag'),
      responses: responses('put', { '200': ok('The renamed tag.', schemaRef('Tag')) }, { 400: ['invalid_uuid'], 404: ['tag_not_found'], 409: ['tag_name_exists'] }),
    },
    delete: {
      tags: ['Tags'],
      operationId: 'deleteTag',
      summary: 'Delete a tag',
      description: 'The tag is removed from every subscriber.',
      parameters: [ref('parameters', 'TagId')],
      responses: responses('delete', { '204': noContent('Deleted.') }, { 400: ['invalid_uuid'], 404: ['tag_not_found'] }),
    },
  },
};

export const tagParameters = {
  TagId: { name: 'tagId', in: 'path', required: true, schema: uuid },
};

export const tagSchemas = {
  Tag: object(['id', 'name', 'subscriberCount', 'createdAt'], { id: uuid, name: { type: 'string' }, subscriberCount: int64, createdAt: instant }),
  TagList: object(['items'], { items: { type: 'array', items: schemaRef('Tag') } }),
  AddTag: object(['name'], { name: { type: 'string', minLength: 1, maxLength: MAX.tagName, description: 'Trimmed, 1-100 characters, unique in the account ignoring case.' } }),
  RenameTag: object(['name'], { name: { type: 'string', minLength: 1, maxLength: MAX.tagName } }),
};
