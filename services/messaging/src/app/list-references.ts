// Use case ListReferences: the account's automations with a step naming a segment (IF_IN_SEGMENT) or
// a topic (SEND_EMAIL), asked by its owner before it is deleted. Broadcasts join here when they exist.
import { REFERENCES_SHOWN, type ReferencedKind, type ReferenceList } from '@mailer/kit/references';
import type { AutomationRepository } from '../store/automations';

const USE = {
  SEGMENT: { member: 'segmentId', use: 'checks this segment in an IF_IN_SEGMENT step' },
  TOPIC: { member: 'topicId', use: 'sends to this topic in a SEND_EMAIL step' },
} as const;

export async function listReferences(deps: { automations: Pick<AutomationRepository, 'namingAudience'> }, accountId: string, kind: ReferencedKind, id: string): Promise<ReferenceList> {
  const { member, use } = USE[kind];
  const { count, automations } = await deps.automations.namingAudience(accountId, member, id, REFERENCES_SHOWN);
  return { count, references: automations.map((a) => ({ collection: 'automations', id: a.id, name: a.name, use })) };
}
