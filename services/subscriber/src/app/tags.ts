// Use cases of tags, one per RPC (ListTags, AddTag, GetTag, RenameTag, DeleteTag). Inputs are parsed
// by handlers/tags.ts; a tag comes back with its subscriber count.
import type { TagDef } from '../domain/types';
import { tagEvent } from '../events/catalog-events';
import { commitDefinitionChange } from './commit';
import { newIdOf, nowOf, type Deps } from './deps';
import { tagNotFound } from './not-found';

export interface CountedTag {
  tag: TagDef;
  subscriberCount: number;
}

const counted = async (deps: Deps, accountId: string, tag: TagDef): Promise<CountedTag> => ({ tag, subscriberCount: await deps.subscribers.countWithTag(accountId, tag.id) });

export async function listTags(deps: Deps, input: { accountId: string }): Promise<CountedTag[]> {
  const tags = await deps.catalog.listTags(input.accountId);
  return Promise.all(tags.map((t) => counted(deps, input.accountId, t)));
}

/** `name` and its case-insensitive `key` as domain/tags validateTagName gives them. */
export async function addTag(deps: Deps, input: { accountId: string; name: string; key: string }): Promise<CountedTag> {
  const { accountId, name, key } = input;
  const now = nowOf(deps);
  const tag = await commitDefinitionChange(deps, async (tx, events) => {
    const tag: TagDef = { id: newIdOf(deps), name, createdAt: now };
    await deps.catalog.insertTag(tx, accountId, tag, key);
    events.push(tagEvent('created', accountId, tag, now));
    return tag;
  });
  return { tag, subscriberCount: 0 };
}

export async function getTag(deps: Deps, input: { accountId: string; tagId: string }): Promise<CountedTag> {
  const tag = await deps.catalog.getTag(input.accountId, input.tagId);
  if (!tag) throw tagNotFound(input.tagId);
  return counted(deps, input.accountId, tag);
}

export async function renameTag(deps: Deps, input: { accountId: string; tagId: string; name: string; key: string }): Promise<CountedTag> {
  const { accountId, tagId: id, name, key } = input;
  const now = nowOf(deps);
  const tag = await commitDefinitionChange(deps, async (tx, events) => {
    const current = await deps.catalog.getTag(accountId, id);
    if (!current) throw tagNotFound(id);
    if (current.name === name) return current;
    const next = { ...current, name };
    await deps.catalog.renameTag(tx, accountId, id, name, key);
    events.push(tagEvent('renamed', accountId, next, now, { previousName: current.name }));
    return next;
  });
  return counted(deps, accountId, tag);
}

/** Deletes the tag and takes it off every subscriber of the account (one tag.deleted fact covers them). */
export async function deleteTag(deps: Deps, input: { accountId: string; tagId: string }): Promise<void> {
  const { accountId, tagId: id } = input;
  const now = nowOf(deps);
  await commitDefinitionChange(deps, async (tx, events) => {
    const current = await deps.catalog.getTag(accountId, id);
    if (!current) throw tagNotFound(id);
    await deps.catalog.deleteTag(tx, accountId, id);
    const removed = await deps.subscribers.removeTag(tx, accountId, id, now);
    events.push(tagEvent('deleted', accountId, current, now, { removedFromSubscribers: removed }));
  });
}
