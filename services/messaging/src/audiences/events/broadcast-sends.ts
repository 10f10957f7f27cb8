// The broadcast send poller (durable time: a due row, not a timer): a broadcast with something due (its sendAt,
// the next page of its audience, a recipient's send window, the A/B decision, a cancel's clean-up)
// is a row with `sendDueAt`, claimed with a lease by the kit's due poller and worked by
// app/broadcast-send.ts. After a restart the poller looks at the store at once, so a broadcast that
// fell due while no replica ran starts within seconds; a replica that dies mid-send lets its lease
// lapse and another resumes at the last committed step.
import { Counter, startDuePoller, type DuePoller, type Logger, type Registry } from '@mailer/kit';
import { sendBroadcast } from '../app/broadcast-send';
import type { BroadcastDeps } from '../app/broadcast-ports';
import { broadcastCollection, dueBroadcasts } from '../store/broadcasts';

/** Broadcasts worked at once by one replica (each sends page after page). */
const CONCURRENCY = 2;

/** Why broadcasts fail, as the metric counts them: the errorIds a customer can fix, else `other`. */
export const BROADCAST_FAILURE_REASONS = ['template_not_found', 'template_render_failed', 'sender_profile_not_found', 'sender_profile_required', 'sender_domain_not_verified', 'segment_not_found', 'topic_not_found', 'other'] as const;

export function broadcastFailureCounter(registry: Registry): (errorId: string) => void {
  const counter = new Counter({
    name: 'mailer_broadcasts_failed_total',
    help: `Broadcasts whose send stopped after BROADCAST_SEND_MAX_ATTEMPTS failed tries (FAILED), by reason (${BROADCAST_FAILURE_REASONS.join(', ')})`,
    labelNames: ['reason'],
    registers: [registry],
  });
  for (const reason of BROADCAST_FAILURE_REASONS) counter.inc({ reason }, 0);
  return (errorId) => counter.inc({ reason: (BROADCAST_FAILURE_REASONS as readonly string[]).includes(errorId) ? errorId : 'other' });
}

export function startBroadcastSends(deps: BroadcastDeps, logger: Pick<Logger, 'warn' | 'error'>): DuePoller {
  const due = dueBroadcasts(broadcastCollection(deps.store));
  return startDuePoller({
    name: 'broadcast-sends',
    claim: due.claim,
    nextDueAt: due.nextDueAt,
    leaseMs: deps.settings.leaseMs,
    concurrency: CONCURRENCY,
    now: deps.now,
    logger,
    rowLogFields: (row) => ({ broadcastId: row._id, accountId: row.accountId }),
    handle: (row) => sendBroadcast(deps, row.accountId, row._id),
  });
}
