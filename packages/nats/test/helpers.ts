import { NatsConnection } from 'nats';
import { ensureStreams, StreamSpec } from '../src/streams';

let counter = 0;

/** A stream of its own per test, so tests in one file never see each other's messages. */
export async function freshStream(nc: NatsConnection, retention: StreamSpec['retention'] = 'limits'): Promise<{ name: string; subject: (s: string) => string }> {
  const name = `T${process.pid}_${++counter}`;
  const prefix = name.toLowerCase();
  await ensureStreams(nc, [{ name, subjects: [`${prefix}.>`], retention, maxAgeMs: 3_600_000, duplicateWindowMs: 60_000 }]);
  return { name, subject: (s: string) => `${prefix}.${s}` };
}

/** The suite's one poll-to-a-deadline (imported by path: @mailer/testing depends on this package). */
export { waitFor } from '../../testing/src/wait';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
