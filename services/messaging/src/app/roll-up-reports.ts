// Use case RollUpReports: the email report's counts of every day that ended a day ago go into the
// daily aggregates (store/report-days.ts), which outlive the message records. Run at start and every
// hour; a replica that runs it while another does writes the same documents.
import type { Logger } from '@mailer/kit';
import type { Store } from '@mailer/store';
import { rolledMessages, type MessageCollections } from '../store/messages';
import { rollUp } from '../store/report-days';

export interface RollUpDeps {
  store: Store;
  messages: MessageCollections;
  /** REPORT_RETENTION_DAYS: how far back the first roll-up reaches. */
  reportRetentionDays: number;
  now(): Date;
}

export async function rollUpReports(deps: RollUpDeps): Promise<{ days: number }> {
  return { days: await rollUp(deps.store, deps.messages.days, rolledMessages(deps.messages), deps.now(), deps.reportRetentionDays) };
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
