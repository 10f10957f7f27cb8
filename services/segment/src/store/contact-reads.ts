/**
 * Reads of one account's contacts for counts, previews and member pages. The account is fixed when
 * the repository is made and put at the top level of every filter (compiled filters carry it there
 * already, so this changes nothing for them; it keeps a filter built without it from reading every
 * account's contacts), where the stores plan by it (index prefix, embedded partition).
 */
import type { AccountFilter, Collection } from '@mailer/store';
import type { Filter } from '../domain/compile';
import type { ProjectedContact } from './contacts';

type FindOptions = Parameters<Collection<ProjectedContact>['find']>[1];

export function contactsOf(contacts: Collection<ProjectedContact>, accountId: string) {
  const scoped = (filter: Filter): AccountFilter => ({ ...filter, accountId });
  return {
    accountId,
    count: (filter: Filter): Promise<number> => contacts.countDocuments(scoped(filter)),
    find: (filter: Filter, options: FindOptions): Promise<ProjectedContact[]> => contacts.find(scoped(filter), options),
  };
}
export type ContactReads = ReturnType<typeof contactsOf>;
