// The subscriber service as the messaging service's templates see it: GetSubscriberByEmail mapped
// to a SubscriberView (render previews; sends may use it too).
import { createClient, DomainError, GrpcStatus, peerClient, type Logger } from '@mailer/kit';
import { subscriberV1 } from '@mailer/proto';
import type { SubscriberLookup, SubscriberView } from '../app/render-values';

export interface SubscriberDirectory extends SubscriberLookup {
  close(): void;
}

export function subscriberDirectory(address: string, deadlineMs: number, logger?: Logger): SubscriberDirectory {
  const client = peerClient(createClient(subscriberV1.SubscriberServiceClient, address, deadlineMs), {
    service: 'subscriber',
    errorId: 'service_unavailable',
    message: 'The subscriber service is unavailable; retry later.',
    logger,
  });
  return {
    async byEmail(accountId, email): Promise<SubscriberView | null> {
      try {
        const { subscriber } = await client.getSubscriberByEmail({ accountId, email });
        if (!subscriber) return null;
        const fields: Record<string, string> = {};
        for (const v of subscriber.values) if (v.personalizationTagName) fields[v.personalizationTagName] = v.displayValue;
        return { id: subscriber.id, email: subscriber.email, firstName: subscriber.firstName ?? null, fields };
      } catch (err) {
        if (err instanceof DomainError && err.code === GrpcStatus.NOT_FOUND) return null;
        throw err;
      }
    },
    close: () => client.close(),
  };
}
