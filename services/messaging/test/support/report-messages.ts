// Message records for report tests, stored through the messages repository.
import type { EmailMessageDoc, MessageRepository } from '../../src/mail/store/messages';

type Times = Partial<Pick<EmailMessageDoc, 'sentAt' | 'deliveredAt' | 'firstOpenedAt' | 'firstClickedAt' | 'bouncedAt' | 'complainedAt' | 'machineOpenCount' | 'machineClickCount'>>;

/** A SENT transactional message with the given fact times (everything else plausible and fixed). */
export function messageRecord(id: string, times: Times): Omit<EmailMessageDoc, 'accountId'> {
  const createdAt = times.sentAt ?? new Date('2024-01-01T00:00:00Z');
  return {
    _id: id,
    kind: 'TRANSACTIONAL',
    templateName: 'welcome',
    email: `${id}@example.org`,
    subscriberId: null,
    topicId: null,
    senderProfileId: 'sender-1',
    fromEmail: 'news@example.com',
    fromName: 'News',
    replyTo: null,
    subject: 'Hello',
    links: [],
    tracking: { opens: true, clicks: true },
    status: 'SENT',
    suppressionReason: null,
    history: [],
    attempts: [],
    nextAttemptAt: null,
    createdAt,
    sentAt: null,
    deliveredAt: null,
    bouncedAt: null,
    complainedAt: null,
    bounce: null,
    openCount: times.firstOpenedAt ? 1 : 0,
    firstOpenedAt: null,
    machineOpenCount: 0,
    clickCount: times.firstClickedAt ? 1 : 0,
    firstClickedAt: null,
    machineClickCount: 0,
    eventProperties: null,
    ...times,
  };
}

export async function insertMessages(repo: MessageRepository, records: Array<Omit<EmailMessageDoc, 'accountId'>>): Promise<void> {
  for (const r of records) await repo.insert(r, null);
}
