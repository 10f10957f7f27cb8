// Use case ListReferences: the account's newsletters that send to a segment or topic, asked by its
// owner before it is deleted (a newsletter naming one that is gone could not send its issues).
import { REFERENCES_SHOWN, type ReferencedKind, type ReferenceList } from '@mailer/kit/references';
import type { NewsletterRepository } from '../store/newsletters';

const MEMBER = { SEGMENT: 'segmentId', TOPIC: 'topicId' } as const;

export async function listReferences(deps: { newsletters: NewsletterRepository }, accountId: string, kind: ReferencedKind, id: string): Promise<ReferenceList> {
  const { count, newsletters } = await deps.newsletters.naming(accountId, MEMBER[kind], id, REFERENCES_SHOWN);
  const use = `sends its issues to this ${kind === 'SEGMENT' ? 'segment' : 'topic'}`;
  return { count, references: newsletters.map((n) => ({ collection: 'rssNewsletters', id: n.id, name: n.name, use })) };
}
