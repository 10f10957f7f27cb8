// email.* facts (API.md "Delivery facts"): `{messageId, accountId, email, subscriberId, kind,
// templateName, eventProperties, at}` plus the members of each type, built from the message record.
import { domainFact, type DomainMessage, type Fact } from '@mailer/nats/facts';
import type { EmailMessageDoc } from '../store/messages';

type EmailFactType = 'email.sent' | 'email.delivered' | 'email.bounced' | 'email.opened' | 'email.clicked' | 'email.complained';
type Members<T extends EmailFactType> = Omit<Fact<T>, 'type' | 'accountId' | 'occurredAt' | 'messageId' | 'email' | 'subscriberId' | 'kind' | 'templateName' | 'eventProperties'>;

export function emailFact<T extends EmailFactType>(type: T, message: EmailMessageDoc, at: Date, members: Members<T>): DomainMessage {
  return domainFact({
    type,
    accountId: message.accountId,
    occurredAt: at.toISOString(),
    messageId: message._id,
    email: message.email,
    subscriberId: message.subscriberId,
    kind: message.kind,
    templateName: message.templateName,
    eventProperties: message.eventProperties,
    ...members,
  } as Fact<T>);
}
