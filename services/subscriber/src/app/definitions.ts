// Loading what subscriber data refers to: the account's fields, tags and topics.
import type { AccountDefinitions } from '../domain/contacts';
import { Catalog } from '../domain/fields';
import { checkDefaultPresent } from './default-topic';
import type { Deps } from './deps';

export async function loadCatalog(deps: Deps, accountId: string): Promise<Catalog> {
  return new Catalog(await deps.catalog.listFields(accountId));
}

/**
 * The account's catalog, tags and topics: loaded once per request, whatever its size. Callers that
 * need the default topic run ensureDefaultTopic first (outside their transaction).
 */
export async function loadDefinitions(deps: Deps, accountId: string): Promise<AccountDefinitions> {
  const [fields, tags, topics] = await Promise.all([deps.catalog.listFields(accountId), deps.catalog.listTags(accountId), deps.catalog.listTopics(accountId)]);
  checkDefaultPresent(deps, accountId, topics);
  return { catalog: new Catalog(fields), tags: new Map(tags.map((t) => [t.id, t])), topics: new Map(topics.map((t) => [t.id, t])) };
}
