// email.* facts of one message (the API contract "Delivery facts": {messageId, accountId, email, subscriberId,
// kind, templateName, eventProperties, at, machine?}), built from the stored message record.
import { domainFact, type DomainMessage, type Fact } from '@mailer/nats/facts';
import type { EmailMessageDoc } from '../store/messages';

type EmailFactType = 'email.sent' | 'email.delivered' | 'email.bounced' | 'email.opened' | 'email.clicked' | 'email.complained';
type Extra<T extends EmailFactType> = Omit<Fact<T>, 'type' | 'accountId' | 'occurredAt' | 'messageId' | 'email' | 'subscriberId' | 'kind' | 'templateName' | 'eventProperties'>;

export function emailFact<T extends EmailFactType>(type: T, message: EmailMessageDoc, at: Date, extra: Extra<T>): DomainMessage {
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
    ...extra,
  } as Fact<T>);
}
