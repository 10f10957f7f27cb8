// SetDeliveryStatus: the messaging service reports a hard bounce (BOUNCED) or a spam complaint
// (COMPLAINED, with the topic of the mail complained about) for an address. System only: no REST
// route reaches it. The change goes through changeSubscriber, so it records the usual
// subscriber.updated (and subscriber.topic_opted_out) facts; a repeated report changes nothing.
import { DomainError } from '@mailer/kit';
import { statusAfterDelivery, type SubscriberStatus } from '../domain/subscriber';
import { optOutOfTopic } from '../domain/topics';
import type { Deps } from './deps';
import { changeSubscriber } from './subscriber-change';

/** The opt-out source recorded for a complaint (the API contract: "unsubscribed from the topic of that mail"). */
export const COMPLAINT_OPT_OUT_SOURCE = 'complaint';

export interface DeliveryStatusInput {
  accountId: string;
  /** Canonical address. */
  email: string;
  status: SubscriberStatus;
  optOutTopicId: string | null;
}

/** The subscriber's status afterwards, or null when the address is no subscriber of the account. */
export async function setDeliveryStatus(deps: Deps, input: DeliveryStatusInput): Promise<SubscriberStatus | null> {
  statusAfterDelivery('ACTIVE', input.status); // refuses a status that is no delivery outcome, before any read
  const found = await deps.subscribers.getByEmail(input.accountId, input.email);
  if (!found) return null;
  try {
    const { state } = await changeSubscriber(deps, input.accountId, found.id, (current, defs, now) => {
      const next = { ...current, status: statusAfterDelivery(current.status, input.status) };
      // A topic deleted since the mail was sent has nothing left to opt out of.
      const topicId = input.optOutTopicId;
      return topicId && defs.topics.has(topicId) ? { ...next, ...optOutOfTopic(current, topicId, now, COMPLAINT_OPT_OUT_SOURCE) } : next;
    });
    return state.status;
  } catch (err) {
    // Deleted between the lookup and the change: nothing to update.
    if (err instanceof DomainError && err.errorId === 'subscriber_not_found') return null;
    throw err;
  }
}
