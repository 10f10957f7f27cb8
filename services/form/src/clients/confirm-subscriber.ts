// The subscriber service's ConfirmSubscriber as the confirm page sees it: UNCONFIRMED -> ACTIVE
// (subscriber.confirmed), any other status unchanged, the status before and after as the API contract names
// them. Its own errors pass through (subscriber_not_found: deleted since); when it does not answer,
// PeerUnavailable (the page says to try again).
import { createClient, peerClient, protoEnum, type Logger } from '@mailer/kit';
import { signupV1, subscriberV1 } from '@mailer/proto';

export interface SubscriberConfirmation {
  confirm(accountId: string, subscriberId: string): Promise<{ status: string; previousStatus: string }>;
  close(): void;
}

const Statuses = protoEnum(subscriberV1.SubscriberStatus, 'SUBSCRIBER_STATUS_');

export function subscriberConfirmation(address: string, deadlineMs: number, logger?: Logger): SubscriberConfirmation {
  const signups = peerClient(createClient(signupV1.SignupServiceClient, address, deadlineMs), {
    service: 'subscriber',
    errorId: 'service_unavailable',
    message: 'The subscriber service is unavailable; the subscription cannot be confirmed right now.',
    logger,
  });
  return {
    async confirm(accountId, subscriberId) {
      const r = await signups.confirmSubscriber({ accountId, subscriberId });
      return { status: Statuses.tryFromProto(r.status) ?? 'UNSPECIFIED', previousStatus: Statuses.tryFromProto(r.previousStatus) ?? 'UNSPECIFIED' };
    },
    close: () => signups.close(),
  };
}
