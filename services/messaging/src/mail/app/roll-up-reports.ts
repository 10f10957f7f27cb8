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

/** Rolls up now and every hour until stopped; a failed round is logged and tried at the next. */
export function startReportRollUps(deps: RollUpDeps & { logger: Logger }): { stop(): Promise<void> } {
  let running: Promise<unknown> = Promise.resolve();
  const round = () => {
    running = rollUpReports(deps).catch((err) => deps.logger.error({ err: (err as Error).message }, 'report roll-up failed; retried within the hour'));
  };
  round();
  const timer = setInterval(round, EVERY_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
