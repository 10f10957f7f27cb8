import { SubscriberStatuses } from '../../mapping/enums';
import { ERROR_IDS_KEYWORD } from '../keywords';
import { ref, uuid, type Json } from '../common';

/** Limits and value schemas used by several resources of the subscriber domain. */

// ---- limits (the subscriber service enforces the same) -----------------------------------------
export const MAX = {
  email: 254,
  firstName: 255,
  label: 255,
  longText: 100_000,
  tagName: 100,
  topicLabel: 255,
  description: 2_000,
  options: 500,
  tagIds: 1_000,
  topicIds: 1_000,
  fieldValues: 1_000,
  bulkSubscribers: 10_000,
  syncRows: 1_000,
  optOutSource: 100,
  search: 254,
} as const;

export const STATUSES = SubscriberStatuses.names;

// errorIds shared by several operations
export const VALUE_400 = ['invalid_uuid', 'invalid_email', 'duplicate_ids', 'field_value_kind_mismatch', 'option_inactive'];
export const VALUE_404 = ['field_not_found', 'option_not_found'];

export const subscriberPath = [ref('parameters', 'SubscriberId')];

export const ids = (maxItems: number, description?: string) => ({ type: 'array', items: uuid, uniqueItems: true, maxItems, ...(description ? { description } : {}) });
export const int64 = { type: 'integer', format: 'int64', minimum: 0 };
export const int32 = { type: 'integer', format: 'int32' };
export const nullable = (schema: Json) => ({ ...schema, type: [schema.type as string, 'null'] });

/** Email addresses: canonicalised by the service; too long or empty is an invalid address. */
export const emailAddress = {
  type: 'string',
  minLength: 1,
  maxLength: MAX.email,
  [ERROR_IDS_KEYWORD]: { minLength: 'invalid_email', maxLength: 'invalid_email' },
  description: 'Trimmed and lowercased by the service; invalid syntax answers `400 invalid_email`.',
};
export const firstName = { type: ['string', 'null'], maxLength: MAX.firstName, description: 'Trimmed; null (or blank) means none.' };
