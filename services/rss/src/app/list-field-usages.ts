// Use case ListFieldUsages: the account's newsletters whose templates print the field.
import { mergeTagUsages, type MergeTagUsage } from '../domain/merge-tags';
import type { NewsletterRepository } from '../store/newsletters';

/** Templates name a field by its personalization tag (built-in fields too), never by its id. */
export async function listFieldUsages(deps: { newsletters: NewsletterRepository }, input: { accountId: string; personalizationTagName: string }): Promise<MergeTagUsage[]> {
  if (input.personalizationTagName === '') return [];
  const newsletters = await deps.newsletters.templatesOf(input.accountId);
  return newsletters.flatMap((n) => mergeTagUsages(n, input.personalizationTagName));
}
