// Use case ListReferences, asked by the owner of a segment or topic before it is deleted: the
// account's automations with a step naming it (IF_IN_SEGMENT, SEND_EMAIL) and its SCHEDULED or
// SENDING broadcasts sending to it (a DRAFT is checked again when it is scheduled).
import { REFERENCES_SHOWN, type ReferencedKind, type ReferenceList } from '@mailer/kit/references';
import type { AutomationRepository } from '../../automations/store/automations';
import type { BroadcastRepository } from '../../audiences/store/broadcasts';

const USE = {
  SEGMENT: { member: 'segmentId', use: 'checks this segment in an IF_IN_SEGMENT step', broadcastUse: 'sends to this segment' },
  TOPIC: { member: 'topicId', use: 'sends to this topic in a SEND_EMAIL step', broadcastUse: 'sends to this topic' },
} as const;

export async function listReferences(
  deps: { automations: Pick<AutomationRepository, 'namingAudience'>; broadcasts: Pick<BroadcastRepository, 'naming'> },
  accountId: string,
  kind: ReferencedKind,
  id: string,
): Promise<ReferenceList> {
  const { member, use, broadcastUse } = USE[kind];
  const [automations, broadcasts] = await Promise.all([deps.automations.namingAudience(accountId, member, id, REFERENCES_SHOWN), deps.broadcasts.naming(accountId, member, id, REFERENCES_SHOWN)]);
  const references = [
    ...automations.automations.map((a) => ({ collection: 'automations', id: a.id, name: a.name, use })),
    ...broadcasts.broadcasts.map((b) => ({ collection: 'broadcasts', id: b._id, name: b.name, use: broadcastUse })),
  ];
  return { count: automations.count + broadcasts.count, references: references.slice(0, REFERENCES_SHOWN) };
}
