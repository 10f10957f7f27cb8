// The subscriber service as the messaging service's templates see it: GetSubscriberByEmail mapped
// to a SubscriberView (render previews; sends may use it too).
import { createClient, DomainError, GrpcStatus, peerClient, protoEnum, type Logger } from '@mailer/kit';
import { subscriberV1 } from '@mailer/proto';
import type { Recipient, RecipientLookup } from '../app/accept-message';
import type { SubscriberLookup, SubscriberView } from '../app/render-values';

const SubscriberStatuses = protoEnum(subscriberV1.SubscriberStatus, 'SUBSCRIBER_STATUS_');

export interface SubscriberDirectory extends SubscriberLookup, RecipientLookup {
  close(): void;
}

export function subscriberDirectory(address: string, deadlineMs: number, logger?: Logger): SubscriberDirectory {
  const client = peerClient(createClient(subscriberV1.SubscriberServiceClient, address, deadlineMs), {
    service: 'subscriber',
    errorId: 'service_unavailable',
    message: 'The subscriber service is unavailable; retry later.',
    logger,
  });
  // A send also needs the status (BLOCKED is never mailed): one call serves both views.
  async function recipientByEmail(accountId: string, email: string): Promise<Recipient | null> {
    try {
      const { subscriber } = await client.getSubscriberByEmail({ accountId, email });
      if (!subscriber) return null;
      const fields: Record<string, string> = {};
      for (const v of subscriber.values) if (v.personalizationTagName) fields[v.personalizationTagName] = v.displayValue;
      const status = SubscriberStatuses.tryFromProto(subscriber.subscriberStatus) ?? 'ACTIVE';
      return { id: subscriber.id, email: subscriber.email, firstName: subscriber.firstName ?? null, fields, status };
    } catch (err) {
      if (err instanceof DomainError && err.code === GrpcStatus.NOT_FOUND) return null;
      throw err;
    }
  }
  return {
    async byEmail(accountId, email): Promise<SubscriberView | null> {
      const found = await recipientByEmail(accountId, email);
      return found && { id: found.id, email: found.email, firstName: found.firstName, fields: found.fields };
    },
    recipientByEmail,
    close: () => client.close(),
  };
}
