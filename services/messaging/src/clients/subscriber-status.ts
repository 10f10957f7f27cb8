// The subscriber service's SetDeliveryStatus (system RPC): the bounce and complaint effects on a
// subscriber (events/subscriber-status.ts). Its own errors pass through; when it does not answer,
// PeerUnavailable (the job is then retried).
import { createClient, peerClient, type Logger } from '@mailer/kit';
import { subscriberV1 } from '@mailer/proto';

/** What the bounce effects need from the subscriber service (a port, so the consumer names no transport). */
export interface SubscriberStatuses {
  /** BOUNCED or COMPLAINED for the account's subscriber with this address (none: nothing happens); a complaint also opts out of `optOutTopicId`. */
  setDeliveryStatus(accountId: string, email: string, status: 'BOUNCED' | 'COMPLAINED', optOutTopicId: string | null): Promise<void>;
  close(): void;
}

const STATUS = {
  BOUNCED: subscriberV1.SubscriberStatus.SUBSCRIBER_STATUS_BOUNCED,
  COMPLAINED: subscriberV1.SubscriberStatus.SUBSCRIBER_STATUS_COMPLAINED,
} as const;

export function subscriberStatusClient(address: string, deadlineMs: number, logger?: Logger): SubscriberStatuses {
  const client = peerClient(createClient(subscriberV1.SubscriberServiceClient, address, deadlineMs), {
    service: 'subscriber',
    errorId: 'service_unavailable',
    message: 'The subscriber service is unavailable; retry later.',
    logger,
  });
  return {
    async setDeliveryStatus(accountId, email, status, optOutTopicId) {
      await client.setDeliveryStatus({ accountId, email, subscriberStatus: STATUS[status], optOutTopicId: optOutTopicId ?? undefined });
    },
    close: () => client.close(),
  };
}
