// Waiting in tests without sleeping a fixed time: `waitFor` polls a condition until a deadline, and
// `waitForSettled` is the barrier before counting what happened "exactly once": every durable JetStream
// consumer has nothing pending or unacknowledged and every outbox named is empty, twice in a row with no
// new message on any stream in between. A late duplicate is then already counted, not missed by a sleep
// that ended too early (or passed by one that was long enough on a fast machine only).
import { AckPolicy, type NatsConnection } from 'nats';
import type { RunningProcess } from './processes';

const POLL_MS = 50;

/**
 * Polls `check` until it returns something truthy and resolves with it; fails after `timeoutMs` with
 * `what` and the last value seen. A check that throws fails the wait at once (its error is the story).
 */
export async function waitFor<T>(what: string, check: () => T | Promise<T>, timeoutMs = 30_000): Promise<Exclude<T, false | null | undefined | 0 | ''>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as Exclude<T, false | null | undefined | 0 | ''>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last: ${describe(value)}`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

function describe(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Reads how many documents an outbox still holds (in process: the relay's `pending`). */
export type OutboxCount = () => Promise<number>;

/** A service process's outbox, read from its `outbox_pending_events` gauge (the metrics port of its ready line). */
export function outboxOf(proc: Pick<RunningProcess, 'ready'>): OutboxCount {
  const port = proc.ready.metricsPort;
  if (typeof port !== 'number') throw new Error('the process did not report a metricsPort in its ready line');
  return async () => {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    // `outbox_pending_events{service="..."} 3` (the registry's default labels), or without labels
    const line = text.split('\n').find((l) => /^outbox_pending_events[{ ]/.test(l));
    if (!line) throw new Error('outbox_pending_events is not exported');
    return Number(line.split(' ').at(-1));
  };
}

export interface SettledOptions {
  /** Outboxes that must be empty (their facts and jobs published). */
  outboxes?: OutboxCount[];
  /** Only these durable consumers count (default: every durable consumer with explicit acks). */
  consumers?: string[];
  timeoutMs?: number;
}

interface Snapshot {
  busy: string[];
  lastSeqs: string;
}

/**
 * Resolves once JetStream and the outboxes are idle: nothing left to publish, every (chosen) durable
 * consumer with nothing pending and nothing awaiting its ack (a message being handled, or nak'ed for a
 * later retry, is still awaiting it). Idle must be seen twice in a row with every stream's last
 * sequence unchanged, so a message published between the reads (a consumer's own output) is not missed.
 */
export async function waitForSettled(nc: NatsConnection, opts: SettledOptions = {}): Promise<void> {
  const jsm = await nc.jetstreamManager();
  const snapshot = async (): Promise<Snapshot> => {
    const busy: string[] = [];
    for (const [i, count] of (opts.outboxes ?? []).entries()) {
      const n = await count();
      if (n > 0) busy.push(`outbox #${i + 1}: ${n} unpublished`);
    }
    const seqs: string[] = [];
    for await (const stream of jsm.streams.list()) {
      seqs.push(`${stream.config.name}:${stream.state.last_seq}`);
      for await (const c of jsm.consumers.list(stream.config.name)) {
        if (!c.config.durable_name || c.config.ack_policy === AckPolicy.None) continue;
        if (opts.consumers && !opts.consumers.includes(c.config.durable_name)) continue;
        if (c.num_pending > 0 || c.num_ack_pending > 0) busy.push(`${stream.config.name}/${c.name}: ${c.num_pending} pending, ${c.num_ack_pending} unacknowledged`);
      }
    }
    return { busy, lastSeqs: seqs.join(' ') };
  };
  let before: Snapshot | undefined;
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  for (;;) {
    const now = await snapshot();
    if (now.busy.length === 0 && before?.busy.length === 0 && before.lastSeqs === now.lastSeqs) return;
    if (Date.now() > deadline) throw new Error(`JetStream consumers and outboxes did not settle in time: ${now.busy.join('; ') || 'messages still arriving'}`);
    before = now;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}
