// Use case RollUpReports: the email and event reports' counts of every day that ended a day ago go
// into the daily aggregates (store/report-days.ts), which outlive the message records and events. Run at start and every
// hour; a replica that runs it while another does writes the same documents.
import type { Logger } from '@mailer/kit';
import type { Collection, Store } from '@mailer/store';
import { rolledEvents, type EventDoc } from '../../automations/store/events';
import { rolledMessages, type MessageCollections } from '../store/messages';
import { rollUp } from '../store/report-days';

export interface RollUpDeps {
  store: Store;
  messages: MessageCollections;
  events: Collection<EventDoc>;
  /** REPORT_RETENTION_DAYS: how far back the first roll-up reaches. */
  reportRetentionDays: number;
  now(): Date;
}

export async function rollUpReports(deps: RollUpDeps): Promise<{ days: number }> {
  const now = deps.now();
  const messages = await rollUp(deps.store, deps.messages.days, rolledMessages(deps.messages), now, deps.reportRetentionDays);
  const events = await rollUp(deps.store, deps.messages.days, rolledEvents(deps.events), now, deps.reportRetentionDays);
  return { days: Math.max(messages, events) };
}

const EVERY_MS = 3_600_000;
/** How long a round waits for the events consumer's backlog to drain before it rolls up anyway. */
export const BACKLOG_WAIT_MS = 10 * 60_000;
const BACKLOG_POLL_MS = 1_000;

export interface RollUpRounds {
  logger: Logger;
  /**
   * Events received but not recorded yet (the events consumer's lag). An event carries the time the
   * gateway received it, so one that waited in the stream over a day (the service stopped that long)
   * would be recorded into a day already rolled up and be missing from reports: a round first waits,
   * up to BACKLOG_WAIT_MS, until the backlog is gone.
   */
  backlog?(): Promise<number>;
  /** Default BACKLOG_WAIT_MS. */
  backlogWaitMs?: number;
}

/** Rolls up now and every hour until stopped; a failed round is logged and tried at the next. */
export function startReportRollUps(deps: RollUpDeps & RollUpRounds): { stop(): Promise<void> } {
  let stopped = false;
  let running: Promise<unknown> = Promise.resolve();
  const drained = async () => {
    const waitMs = deps.backlogWaitMs ?? BACKLOG_WAIT_MS;
    const until = Date.now() + waitMs;
    while (!stopped && deps.backlog && Date.now() < until) {
      // an unanswered backlog query counts as none: the wait is a precaution, not a gate
      if ((await deps.backlog().catch(() => 0)) === 0) return;
      await new Promise((r) => setTimeout(r, BACKLOG_POLL_MS).unref());
    }
    if (!stopped && deps.backlog) deps.logger.warn({ waitedMs: waitMs }, 'report roll-up: the events backlog is not drained; rolling up anyway');
  };
  const round = () => {
    running = running
      .then(drained)
      .then(() => (stopped ? undefined : rollUpReports(deps)))
      .catch((err) => deps.logger.error({ err: (err as Error).message }, 'report roll-up failed; retried within the hour'));
  };
  round();
  const timer = setInterval(round, EVERY_MS);
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
