// SubscriberService: the field catalog (with usage reports), tags and topics.
import { accountOf, DomainError, failedPrecondition, GrpcStatus, notFound, type AsyncHandlers } from '@mailer/kit';
import type { subscriberV1 } from '@mailer/proto';
import type { Transaction } from '@mailer/store';
import { usageToProto } from '../clients/field-usage';
import {
  BUILT_IN_FIELDS,
  builtInImmutable,
  derivePersonalizationTagName,
  FIRST_CUSTOM_POSITION,
  moveField,
  newFieldOptions,
  parseFieldRef,
  patchOptions,
  renumber,
  RESERVED_TAG_NAMES,
  validateFieldLabel,
  validatePersonalizationTagName,
} from '../domain/fields';
import { parseId } from '../domain/ids';
import { validateTagName } from '../domain/tags';
import { checkTopicDelete, checkTopicUpdate, validateTopicDescription, validateTopicLabel } from '../domain/topics';
import type { FieldDef, TagDef, TopicDef } from '../domain/types';
import { classifyUsages, formsOf, usageProblem, type UsageClassification } from '../domain/usage';
import { fieldEvent, tagEvent, topicEvent } from '../events/catalog-events';
import type { DomainEvent } from '../events/subscriber-events';
import { atomically } from '../store/atomic';
import { checkDefaultPresent, ensureDefaultTopic } from '../app/default-topic';
import { eventsCommitted, newIdOf, nowOf, type Deps } from '../app/deps';
import { builtInFieldToProto, fieldToProto, fieldTypeFromProto, tagToProto, topicToProto } from './mapping';

type CatalogHandlerNames =
  | 'listFields'
  | 'addField'
  | 'getField'
  | 'updateField'
  | 'archiveField'
  | 'restoreField'
  | 'deleteField'
  | 'getFieldUsage'
  | 'listFieldForms'
  | 'listTags'
  | 'addTag'
  | 'getTag'
  | 'renameTag'
  | 'deleteTag'
  | 'listTopics'
  | 'addTopic'
  | 'getTopic'
  | 'updateTopic'
  | 'deleteTopic';

const fieldNotFound = (id: string) => notFound('field_not_found', `field ${id} does not exist`);
const tagNotFound = (id: string) => notFound('tag_not_found', `tag ${id} does not exist`);
const topicNotFound = (id: string) => notFound('topic_not_found', `topic ${id} does not exist`);

export function catalogHandlers(deps: Deps): Pick<AsyncHandlers<subscriberV1.SubscriberServiceServer>, CatalogHandlerNames> {
  const { store, catalog, subscribers } = deps;

  /** A custom field by id; built-in names are refused with built_in_field_immutable. */
  async function customField(accountId: string, rawId: string): Promise<FieldDef> {
    const ref = parseFieldRef(rawId);
    if ('builtIn' in ref) throw builtInImmutable(ref.builtIn);
    const field = await catalog.getField(accountId, ref.id);
    if (!field) throw fieldNotFound(ref.id);
    return field;
  }

  /** Commits catalog writes and their events in one transaction, then wakes the relay. */
  async function commit<R>(unit: (tx: Transaction, events: DomainEvent[]) => Promise<R>): Promise<R> {
    const result = await atomically(store, async (tx) => {
      const events: DomainEvent[] = [];
      const r = await unit(tx, events);
      await subscribers.insertEvents(tx, events);
      return r;
    });
    await eventsCommitted(deps);
    return result;
  }

  async function usageOf(accountId: string, field: FieldDef): Promise<UsageClassification> {
    const answers = await deps.usage.ask({ accountId, fieldId: field.id, personalizationTagName: field.personalizationTagName });
    return classifyUsages(answers);
  }

  /** No archive or permanent delete on a guess: a source that did not answer could hold a blocking usage. */
  function assertUsageKnown(u: UsageClassification): void {
    if (u.unanswered.length === 0) return;
    const details = u.sources.filter((s) => !s.answered).map((s) => ({ path: `sources.${s.service}`, problem: s.error ?? 'no answer' }));
    throw failedPrecondition('field_usage_unknown', `the usage of this field cannot be established: ${u.unanswered.join(', ')} did not answer; retry later`, details);
  }

  const tagCount = (accountId: string, id: string) => subscribers.count({ accountId, tags: id });
  const topicCount = (accountId: string, id: string) => subscribers.count({ accountId, topicIds: id });
  const tagResponse = async (accountId: string, t: TagDef) => ({ tag: tagToProto(t, await tagCount(accountId, t.id)) });
  const topicResponse = async (accountId: string, t: TopicDef) => ({ topic: topicToProto(t, await topicCount(accountId, t.id)) });

  return {
    // ---------------------------------------------------------------- fields
    async listFields(req) {
      const accountId = accountOf(req);
      const custom = (await catalog.listFields(accountId)).filter((f) => req.includeArchived || f.active);
      return { fields: [...BUILT_IN_FIELDS.map((b) => builtInFieldToProto(b.builtInField)), ...custom.map(fieldToProto)] };
    },

    async addField(req) {
      const accountId = accountOf(req);
      const label = validateFieldLabel(req.label);
      const fieldType = fieldTypeFromProto(req.fieldType);
      const given = req.personalizationTagName ? validatePersonalizationTagName(req.personalizationTagName) : undefined;
      const options = newFieldOptions(fieldType, req.options);
      const now = nowOf(deps);
      const field = await commit(async (tx, events) => {
        const fields = await catalog.listFields(accountId);
        const taken = new Set([...RESERVED_TAG_NAMES, ...fields.map((f) => f.personalizationTagName)]);
        if (given && taken.has(given)) throw tagNameExists(given);
        const field: FieldDef = {
          id: newIdOf(deps),
          label,
          personalizationTagName: given ?? derivePersonalizationTagName(label, taken),
          fieldType,
          required: req.required,
          internal: req.internal,
          active: true,
          position: FIRST_CUSTOM_POSITION + fields.length,
          options,
        };
        await catalog.insertField(tx, accountId, field, now);
        events.push(fieldEvent('created', accountId, field, now));
        return field;
      });
      return { field: fieldToProto(field) };
    },

    async getField(req) {
      const accountId = accountOf(req);
      const ref = parseFieldRef(req.fieldId);
      if ('builtIn' in ref) return { field: builtInFieldToProto(ref.builtIn) };
      const field = await catalog.getField(accountId, ref.id);
      if (!field) throw fieldNotFound(ref.id);
      return { field: fieldToProto(field) };
    },

    async updateField(req) {
      const accountId = accountOf(req);
      const ref = parseFieldRef(req.fieldId);
      if ('builtIn' in ref) throw builtInImmutable(ref.builtIn);
      const label = req.label === undefined ? undefined : validateFieldLabel(req.label);
      const now = nowOf(deps);
      const field = await commit(async (tx, events) => {
        const fields = await catalog.listFields(accountId);
        const current = fields.find((f) => f.id === ref.id);
        if (!current) throw fieldNotFound(ref.id);
        const options = req.optionsGiven
          ? patchOptions(current.fieldType, current.options, req.options.map((o) => ({ id: o.id, label: o.label, position: o.position, active: o.active })), () => newIdOf(deps))
          : current.options;
        const moves = req.position === undefined || req.position === current.position ? new Map<string, number>() : moveField(fields, current.id, req.position);
        const next: FieldDef = {
          ...current,
          label: label ?? current.label,
          required: req.required ?? current.required,
          internal: req.internal ?? current.internal,
          options,
          position: moves.get(current.id) ?? current.position,
        };
        if (JSON.stringify(next) !== JSON.stringify(current)) {
          const { id: _id, ...set } = next;
          await catalog.updateField(tx, accountId, current.id, set, now);
          events.push(fieldEvent('updated', accountId, next, now));
        }
        for (const other of fields) {
          const position = moves.get(other.id);
          if (other.id === current.id || position === undefined) continue;
          await catalog.updateField(tx, accountId, other.id, { position }, now);
          events.push(fieldEvent('updated', accountId, { ...other, position }, now));
        }
        return next;
      });
      return { field: fieldToProto(field) };
    },

    async archiveField(req) {
      const accountId = accountOf(req);
      const field = await customField(accountId, req.fieldId);
      if (!field.active) return { field: fieldToProto(field) };
      // asked outside the transaction: the store is not held while other services answer
      const usage = await usageOf(accountId, field);
      assertUsageKnown(usage);
      if (usage.blockingUsages.length) {
        throw failedPrecondition(
          'field_archive_blocked',
          `field ${field.personalizationTagName} is written by ${usage.blockingUsages.length} usage(s); remove them before archiving`,
          usage.blockingUsages.map((u, i) => usageProblem(u, `blockingUsages[${i}]`)),
        );
      }
      const now = nowOf(deps);
      const archived = await commit(async (tx, events) => {
        const current = await catalog.getField(accountId, field.id);
        if (!current) throw fieldNotFound(field.id);
        if (!current.active) return current;
        const next = { ...current, active: false };
        await catalog.updateField(tx, accountId, current.id, { active: false }, now);
        events.push(fieldEvent('archived', accountId, next, now));
        return next;
      });
      return { field: fieldToProto(archived) };
    },

    async restoreField(req) {
      const accountId = accountOf(req);
      const field = await customField(accountId, req.fieldId);
      const now = nowOf(deps);
      const restored = await commit(async (tx, events) => {
        const current = await catalog.getField(accountId, field.id);
        if (!current) throw fieldNotFound(field.id);
        if (current.active) return current;
        const next = { ...current, active: true };
        await catalog.updateField(tx, accountId, current.id, { active: true }, now);
        events.push(fieldEvent('restored', accountId, next, now));
        return next;
      });
      return { field: fieldToProto(restored) };
    },

    async deleteField(req) {
      const accountId = accountOf(req);
      const field = await customField(accountId, req.fieldId);
      if (field.active) throw failedPrecondition('field_not_archived', `field ${field.personalizationTagName} must be archived before it can be deleted`);
      const usage = await usageOf(accountId, field);
      assertUsageKnown(usage);
      if (usage.permanentDeleteBlocked) {
        throw failedPrecondition(
          'field_delete_blocked',
          `field ${field.personalizationTagName} is still referenced; it cannot be deleted permanently`,
          usage.permanentDeleteBlockingUsages.map((u, i) => usageProblem(u, `permanentDeleteBlockingUsages[${i}]`)),
        );
      }
      const now = nowOf(deps);
      await commit(async (tx, events) => {
        const fields = await catalog.listFields(accountId);
        const current = fields.find((f) => f.id === field.id);
        if (!current) throw fieldNotFound(field.id);
        if (current.active) throw failedPrecondition('field_not_archived', `field ${current.personalizationTagName} must be archived before it can be deleted`);
        await catalog.deleteField(tx, accountId, current.id);
        const path = `fields.${current.id}`;
        const removed = await subscribers.updateAll(tx, { accountId, [path]: { $exists: true } }, { $unset: { [path]: '' }, $inc: { version: 1 }, $set: { updatedAt: now } });
        const rest = fields.filter((f) => f.id !== current.id);
        for (const [id, position] of renumber(rest)) {
          await catalog.updateField(tx, accountId, id, { position }, now);
          events.push(fieldEvent('updated', accountId, { ...rest.find((f) => f.id === id)!, position }, now));
        }
        events.unshift(fieldEvent('deleted', accountId, current, now, { removedFromSubscribers: removed }));
      });
      return {};
    },

    async getFieldUsage(req) {
      const accountId = accountOf(req);
      const field = await customField(accountId, req.fieldId);
      const [usage, count] = await Promise.all([usageOf(accountId, field), subscribers.count({ accountId, [`fields.${field.id}`]: { $exists: true } })]);
      const list = (xs: typeof usage.blockingUsages) => xs.map(usageToProto);
      return {
        report: {
          fieldId: field.id,
          fieldLabel: field.label,
          personalizationTagName: field.personalizationTagName,
          fieldType: fieldToProto(field).fieldType,
          subscriberValueCount: String(count),
          archiveBlocked: usage.archiveBlocked,
          permanentDeleteBlocked: usage.permanentDeleteBlocked,
          blockingUsages: list(usage.blockingUsages),
          warningUsages: list(usage.warningUsages),
          contentMergeTagUsages: list(usage.contentMergeTagUsages),
          permanentDeleteBlockingUsages: list(usage.permanentDeleteBlockingUsages),
          externalHints: list(usage.externalHints),
          sources: usage.sources.map((s) => ({ service: s.service, answered: s.answered, error: s.error })),
        },
      };
    },

    async listFieldForms(req) {
      const accountId = accountOf(req);
      const field = await customField(accountId, req.fieldId);
      const [answer] = await deps.usage.ask({ accountId, fieldId: field.id, personalizationTagName: field.personalizationTagName }, ['form']);
      if (!answer.answered) throw failedPrecondition('field_usage_unknown', `the forms using this field cannot be listed: ${answer.error}; retry later`);
      return { forms: formsOf(answer.usages) };
    },

    // ---------------------------------------------------------------- tags
    async listTags(req) {
      const accountId = accountOf(req);
      const tags = await catalog.listTags(accountId);
      const counts = await Promise.all(tags.map((t) => tagCount(accountId, t.id)));
      return { items: tags.map((t, i) => tagToProto(t, counts[i])) };
    },

    async addTag(req) {
      const accountId = accountOf(req);
      const { name, key } = validateTagName(req.name);
      const now = nowOf(deps);
      const tag = await commit(async (tx, events) => {
        const tag: TagDef = { id: newIdOf(deps), name, createdAt: now };
        await catalog.insertTag(tx, accountId, tag, key);
        events.push(tagEvent('created', accountId, tag, now));
        return tag;
      });
      return { tag: tagToProto(tag, 0) };
    },

    async getTag(req) {
      const accountId = accountOf(req);
      const id = parseId(req.tagId, 'tagId');
      const tag = await catalog.getTag(accountId, id);
      if (!tag) throw tagNotFound(id);
      return tagResponse(accountId, tag);
    },

    async renameTag(req) {
      const accountId = accountOf(req);
      const id = parseId(req.tagId, 'tagId');
      const { name, key } = validateTagName(req.name);
      const now = nowOf(deps);
      const tag = await commit(async (tx, events) => {
        const current = await catalog.getTag(accountId, id);
        if (!current) throw tagNotFound(id);
        if (current.name === name) return current;
        const next = { ...current, name };
        await catalog.renameTag(tx, accountId, id, name, key);
        events.push(tagEvent('renamed', accountId, next, now, { previousName: current.name }));
        return next;
      });
      return tagResponse(accountId, tag);
    },

    async deleteTag(req) {
      const accountId = accountOf(req);
      const id = parseId(req.tagId, 'tagId');
      const now = nowOf(deps);
      await commit(async (tx, events) => {
        const current = await catalog.getTag(accountId, id);
        if (!current) throw tagNotFound(id);
        await catalog.deleteTag(tx, accountId, id);
        const removed = await subscribers.updateAll(tx, { accountId, tags: id }, { $pull: { tags: id }, $inc: { version: 1 }, $set: { updatedAt: now } });
        events.push(tagEvent('deleted', accountId, current, now, { removedFromSubscribers: removed }));
      });
      return {};
    },

    // ---------------------------------------------------------------- topics
    async listTopics(req) {
      const accountId = accountOf(req);
      await ensureDefaultTopic(deps, accountId);
      let topics = await catalog.listTopics(accountId);
      if (!checkDefaultPresent(deps, accountId, topics)) {
        await ensureDefaultTopic(deps, accountId);
        topics = await catalog.listTopics(accountId);
      }
      const counts = await Promise.all(topics.map((t) => topicCount(accountId, t.id)));
      return { items: topics.map((t, i) => topicToProto(t, counts[i])) };
    },

    async addTopic(req) {
      const accountId = accountOf(req);
      const label = validateTopicLabel(req.label);
      const description = validateTopicDescription(req.description);
      await ensureDefaultTopic(deps, accountId);
      const now = nowOf(deps);
      const topic = await commit(async (tx, events) => {
        // new topics are not default unless the request says so; then the flag moves to the new one
        const topic: TopicDef = { id: newIdOf(deps), label, description, active: true, isDefault: req.isDefault, createdAt: now };
        if (topic.isDefault) {
          for (const other of (await catalog.listTopics(accountId)).filter((t) => t.isDefault)) {
            await catalog.updateTopic(tx, accountId, other.id, { isDefault: false }, now);
            events.push(topicEvent('updated', accountId, { ...other, isDefault: false }, now));
          }
        }
        await catalog.insertTopic(tx, accountId, topic);
        let enrolled = 0;
        if (req.enrollExistingSubscribers) {
          enrolled = await subscribers.updateAll(
            tx,
            { accountId, topicIds: { $ne: topic.id }, 'optOuts.topicId': { $ne: topic.id } },
            { $push: { topicIds: { $each: [topic.id], $sort: 1 } }, $inc: { version: 1 }, $set: { updatedAt: now } },
          );
        }
        events.push(topicEvent('created', accountId, topic, now, { enrolledExistingSubscribers: req.enrollExistingSubscribers, enrolledCount: enrolled }));
        return topic;
      });
      return topicResponse(accountId, topic);
    },

    async getTopic(req) {
      const accountId = accountOf(req);
      const id = parseId(req.topicId, 'topicId');
      await ensureDefaultTopic(deps, accountId);
      const topic = await catalog.getTopic(accountId, id);
      if (!topic) throw topicNotFound(id);
      return topicResponse(accountId, topic);
    },

    async updateTopic(req) {
      const accountId = accountOf(req);
      const id = parseId(req.topicId, 'topicId');
      const label = req.label === undefined ? undefined : validateTopicLabel(req.label);
      const description = req.descriptionGiven || req.description !== undefined ? validateTopicDescription(req.description) : undefined;
      await ensureDefaultTopic(deps, accountId);
      const now = nowOf(deps);
      const topic = await commit(async (tx, events) => {
        const topics = await catalog.listTopics(accountId);
        const current = topics.find((t) => t.id === id);
        if (!current) throw topicNotFound(id);
        checkTopicUpdate(current, { active: req.active, isDefault: req.isDefault });
        const next: TopicDef = {
          ...current,
          label: label ?? current.label,
          description: description === undefined ? current.description : description,
          active: req.active ?? current.active,
          isDefault: req.isDefault ?? current.isDefault,
        };
        if (next.isDefault && !current.isDefault) {
          for (const other of topics.filter((t) => t.isDefault && t.id !== id)) {
            await catalog.updateTopic(tx, accountId, other.id, { isDefault: false }, now);
            events.push(topicEvent('updated', accountId, { ...other, isDefault: false }, now));
          }
        }
        if (JSON.stringify(next) !== JSON.stringify(current)) {
          const { id: _id, ...set } = next;
          await catalog.updateTopic(tx, accountId, id, set, now);
          events.push(topicEvent('updated', accountId, next, now));
        }
        return next;
      });
      return topicResponse(accountId, topic);
    },

    async deleteTopic(req) {
      const accountId = accountOf(req);
      const id = parseId(req.topicId, 'topicId');
      await ensureDefaultTopic(deps, accountId);
      const now = nowOf(deps);
      await commit(async (tx, events) => {
        const current = await catalog.getTopic(accountId, id);
        if (!current) throw topicNotFound(id);
        checkTopicDelete(current);
        await catalog.deleteTopic(tx, accountId, id);
        const removed = await subscribers.updateAll(
          tx,
          { accountId, $or: [{ topicIds: id }, { 'optOuts.topicId': id }] },
          { $pull: { topicIds: id, optOuts: { topicId: id } }, $inc: { version: 1 }, $set: { updatedAt: now } },
        );
        events.push(topicEvent('deleted', accountId, current, now, { removedFromSubscribers: removed }));
      });
      return {};
    },
  };
}

/** An explicitly given personalization tag name already names a field (or a built-in). */
function tagNameExists(name: string) {
  return new DomainError(GrpcStatus.ALREADY_EXISTS, 'personalization_tag_name_exists', `a field with personalizationTagName ${name} already exists`);
}
