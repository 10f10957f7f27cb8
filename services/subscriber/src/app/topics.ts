// Use cases of topics, one per RPC (ListTopics, AddTopic, GetTopic, UpdateTopic, DeleteTopic). Inputs
// are parsed by handlers/topics.ts; a topic comes back with its subscriber count. Each first makes
// sure the account has its default topic (app/default-topic.ts).
import { checkTopicDelete, checkTopicUpdate } from '../domain/topics';
import type { TopicDef } from '../domain/types';
import { topicEvent } from '../events/catalog-events';
import { commitDefinitionChange } from './commit';
import { checkDefaultPresent, ensureDefaultTopic } from './default-topic';
import { newIdOf, nowOf, type Deps } from './deps';
import { topicNotFound } from './not-found';

export interface CountedTopic {
  topic: TopicDef;
  subscriberCount: number;
}

const counted = async (deps: Deps, accountId: string, topic: TopicDef): Promise<CountedTopic> => ({
  topic,
  subscriberCount: await deps.subscribers.countInTopic(accountId, topic.id),
});

export async function listTopics(deps: Deps, input: { accountId: string }): Promise<CountedTopic[]> {
  const { accountId } = input;
  await ensureDefaultTopic(deps, accountId);
  let topics = await deps.catalog.listTopics(accountId);
  if (!checkDefaultPresent(deps, accountId, topics)) {
    await ensureDefaultTopic(deps, accountId);
    topics = await deps.catalog.listTopics(accountId);
  }
  return Promise.all(topics.map((t) => counted(deps, accountId, t)));
}

export interface AddTopicInput {
  accountId: string;
  label: string;
  description: string | null;
  isDefault: boolean;
  enrollExistingSubscribers: boolean;
}

export async function addTopic(deps: Deps, input: AddTopicInput): Promise<CountedTopic> {
  const { accountId } = input;
  await ensureDefaultTopic(deps, accountId);
  const now = nowOf(deps);
  const topic = await commitDefinitionChange(deps, async (tx, events) => {
    // new topics are not default unless the request says so; then the flag moves to the new one
    const topic: TopicDef = { id: newIdOf(deps), label: input.label, description: input.description, active: true, isDefault: input.isDefault, createdAt: now };
    if (topic.isDefault) {
      for (const other of (await deps.catalog.listTopics(accountId)).filter((t) => t.isDefault)) {
        await deps.catalog.updateTopic(tx, accountId, other.id, { isDefault: false }, now);
        events.push(topicEvent('updated', accountId, { ...other, isDefault: false }, now));
      }
    }
    await deps.catalog.insertTopic(tx, accountId, topic);
    const enrolled = input.enrollExistingSubscribers ? await deps.subscribers.enrollInTopic(tx, accountId, topic.id, now) : 0;
    events.push(topicEvent('created', accountId, topic, now, { enrolledExistingSubscribers: input.enrollExistingSubscribers, enrolledCount: enrolled }));
    return topic;
  });
  return counted(deps, accountId, topic);
}

export async function getTopic(deps: Deps, input: { accountId: string; topicId: string }): Promise<CountedTopic> {
  const { accountId, topicId } = input;
  await ensureDefaultTopic(deps, accountId);
  const topic = await deps.catalog.getTopic(accountId, topicId);
  if (!topic) throw topicNotFound(topicId);
  return counted(deps, accountId, topic);
}

export interface UpdateTopicInput {
  accountId: string;
  topicId: string;
  label?: string;
  /** undefined: unchanged; null: cleared. */
  description?: string | null;
  active?: boolean;
  isDefault?: boolean;
}

export async function updateTopic(deps: Deps, input: UpdateTopicInput): Promise<CountedTopic> {
  const { accountId, topicId: id, label, description } = input;
  await ensureDefaultTopic(deps, accountId);
  const now = nowOf(deps);
  const topic = await commitDefinitionChange(deps, async (tx, events) => {
    const topics = await deps.catalog.listTopics(accountId);
    const current = topics.find((t) => t.id === id);
    if (!current) throw topicNotFound(id);
    checkTopicUpdate(current, { active: input.active, isDefault: input.isDefault });
    const next: TopicDef = {
      ...current,
      label: label ?? current.label,
      description: description === undefined ? current.description : description,
      active: input.active ?? current.active,
      isDefault: input.isDefault ?? current.isDefault,
    };
    if (next.isDefault && !current.isDefault) {
      for (const other of topics.filter((t) => t.isDefault && t.id !== id)) {
        await deps.catalog.updateTopic(tx, accountId, other.id, { isDefault: false }, now);
        events.push(topicEvent('updated', accountId, { ...other, isDefault: false }, now));
      }
    }
    if (JSON.stringify(next) !== JSON.stringify(current)) {
      const { id: _id, ...set } = next;
      await deps.catalog.updateTopic(tx, accountId, id, set, now);
      events.push(topicEvent('updated', accountId, next, now));
    }
    return next;
  });
  return counted(deps, accountId, topic);
}

/**
 * Deletes the topic; it leaves every subscriber's topics and opt-outs (one topic.deleted fact covers
 * them). Not while an RSS newsletter or an automation sends to it (409 topic_in_use), asked before
 * the write.
 */
export async function deleteTopic(deps: Deps, input: { accountId: string; topicId: string }): Promise<void> {
  const { accountId, topicId: id } = input;
  await ensureDefaultTopic(deps, accountId);
  const found = await deps.catalog.getTopic(accountId, id);
  if (!found) throw topicNotFound(id);
  checkTopicDelete(found);
  await deps.references?.refuseWhileReferenced(accountId, 'TOPIC', id);
  const now = nowOf(deps);
  await commitDefinitionChange(deps, async (tx, events) => {
    const current = await deps.catalog.getTopic(accountId, id);
    if (!current) throw topicNotFound(id);
    checkTopicDelete(current);
    await deps.catalog.deleteTopic(tx, accountId, id);
    const removed = await deps.subscribers.removeTopic(tx, accountId, id, now);
    events.push(topicEvent('deleted', accountId, current, now, { removedFromSubscribers: removed }));
  });
}
