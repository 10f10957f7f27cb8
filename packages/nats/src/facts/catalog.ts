// Facts of the subscriber service's field catalog, tags and topics (domain.field.*, domain.tag.*,
// domain.topic.*). Deleting a tag, field or topic also removes it from every subscriber of the
// account: one account-wide fact says so (removedFromSubscribers counts them) rather than one fact
// per subscriber. topic.created with enrolledExistingSubscribers: true means "every contact of the
// account at this point of the stream, except those opted out of it, is now subscribed".
import { z } from 'zod';
import { envelope, id, instant } from './schema';

export const FIELD_TYPES = ['TEXT', 'LONG_TEXT', 'EMAIL', 'NUMBER', 'DATE', 'BOOLEAN', 'SINGLE_CHOICE', 'MULTI_CHOICE'] as const;

export const field = z.object({
  id,
  label: z.string(),
  personalizationTagName: z.string(),
  fieldType: z.enum(FIELD_TYPES),
  required: z.boolean(),
  internal: z.boolean(),
  active: z.boolean(),
  position: z.number().int(),
  options: z.array(z.object({ id, label: z.string(), position: z.number().int(), active: z.boolean() })),
});
export const tag = z.object({ id, name: z.string(), createdAt: instant });
export const topic = z.object({ id, label: z.string(), description: z.string().nullable(), active: z.boolean(), isDefault: z.boolean(), createdAt: instant });

const removed = { removedFromSubscribers: z.number().int().min(0) };

export const catalogFacts = {
  'field.created': z.object({ ...envelope('field.created'), field }),
  'field.updated': z.object({ ...envelope('field.updated'), field }),
  'field.archived': z.object({ ...envelope('field.archived'), field }),
  'field.restored': z.object({ ...envelope('field.restored'), field }),
  'field.deleted': z.object({ ...envelope('field.deleted'), field, ...removed }),
  'tag.created': z.object({ ...envelope('tag.created'), tag }),
  'tag.renamed': z.object({ ...envelope('tag.renamed'), tag, previousName: z.string() }),
  'tag.deleted': z.object({ ...envelope('tag.deleted'), tag, ...removed }),
  'topic.created': z.object({ ...envelope('topic.created'), topic, enrolledExistingSubscribers: z.boolean(), enrolledCount: z.number().int().min(0) }),
  'topic.updated': z.object({ ...envelope('topic.updated'), topic }),
  'topic.deleted': z.object({ ...envelope('topic.deleted'), topic, ...removed }),
};
