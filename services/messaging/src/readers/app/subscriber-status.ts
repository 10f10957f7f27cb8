// A `subscriber-status` job's use case (recorded by app/bounces.ts with a hard bounce or a complaint):
// the subscriber service sets the mail's address BOUNCED / COMPLAINED and, for a complaint, opts it out
// of the mail's topic. events/subscriber-status.ts consumes the jobs and retries on failure.
import type { SubscriberStatuses } from '../../clients/subscribers';
import { messagesOf, type MessageCollections } from '../../mail/store/messages';

export interface SubscriberStatusJob {
  accountId: string;
  messageId: string;
  status: 'BOUNCED' | 'COMPLAINED';
}

/**
 * Tells the subscriber service; 'unknown_message' when the mail is gone (nothing to tell). The
 * subscriber service's errors propagate (PeerUnavailable while it does not answer). Repeating it
 * changes nothing there.
 */
export async function applySubscriberStatus(
  deps: { messages: MessageCollections; subscribers: SubscriberStatuses },
  job: SubscriberStatusJob,
): Promise<'applied' | 'unknown_message'> {
  const message = await messagesOf(deps.messages, job.accountId).get(job.messageId);
  if (!message) return 'unknown_message';
  const optOutTopicId = job.status === 'COMPLAINED' ? message.topicId : null;
  await deps.subscribers.setDeliveryStatus(job.accountId, message.email, job.status, optOutTopicId);
  return 'applied';
}
