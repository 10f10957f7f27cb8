// Carries out `subscriber-status` jobs (recorded by app/bounces.ts in the transaction of a hard
// bounce or a complaint): the subscriber service sets BOUNCED / COMPLAINED (and, for a complaint,
// opts the subscriber out of the mail's topic). parse -> use case (app/subscriber-status.ts) -> ack | nak | term.
//
// Durability: the job sits on JOBS until acked. While the subscriber service does not answer, the
// handler throws and the message is redelivered with backoff (1 s .. 5 min); MAX_DELIVER allows
// about a day of outage before a job is given up (logged). A redelivered job repeats a change the
// subscriber service already made, which changes nothing there.
import { DomainError, PeerUnavailable, type Logger } from '@mailer/kit';
import { runConsumer, type ConsumerHandle, type NatsConnection } from '@mailer/nats';
import { MalformedFactError, parseJob } from '@mailer/nats/facts';
import type { SubscriberStatuses } from '../../clients/subscribers';
import type { MessageCollections } from '../../mail/store/messages';
import { applySubscriberStatus } from '../app/subscriber-status';
import { NATS_ACCESS } from '../../nats-access';

const BACKOFF_MS = [1_000, 5_000, 30_000, 60_000, 300_000];
const MAX_DELIVER = 300; // the last delay repeats: ~25 h of subscriber-service outage

export interface SubscriberStatusDeps {
  messages: MessageCollections;
  subscribers: SubscriberStatuses;
  logger: Logger;
}

export function startSubscriberStatusConsumer(nc: NatsConnection, deps: SubscriberStatusDeps): ConsumerHandle {
  return runConsumer(nc, {
    ...NATS_ACCESS.consumers.subscriberStatus,
    concurrency: 4,
    maxDeliver: MAX_DELIVER,
    backoffMs: BACKOFF_MS,
    log: (msg, extra) => deps.logger.warn(extra ?? {}, msg),
    async handler(msg) {
      let work;
      try {
        work = parseJob('subscriber-status', msg.data);
      } catch (err) {
        if (err instanceof MalformedFactError) return 'term';
        throw err;
      }
      try {
        await applySubscriberStatus(deps, work); // a mail that is gone: nothing to tell, acked
        return 'ack';
      } catch (err) {
        // Down or too slow: retried with backoff. Its own refusal (a request it will never accept): given up.
        if (err instanceof PeerUnavailable || !(err instanceof DomainError)) throw err;
        deps.logger.error({ accountId: work.accountId, messageId: work.messageId, errorId: err.errorId }, 'subscriber service refused a delivery status; giving up');
        return 'term';
      }
    },
  });
}
