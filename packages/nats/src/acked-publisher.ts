import { createInbox, type Msg, type MsgHdrs, type NatsConnection, type Subscription } from 'nats';

/** What JetStream answers a stored publish (its PubAck). */
export interface PubAck {
  stream: string;
  seq: number;
  /** True when the stream already held a message with this Nats-Msg-Id. */
  duplicate: boolean;
}

/**
 * JetStream refused the publish, e.g. `err_code` 10071 "wrong last sequence" (a compare-and-set lost).
 * Same shape as nats.js's own errors (`api_error`), so callers test one field whichever client answered.
 */
export class JetStreamPublishError extends Error {
  constructor(readonly api_error: { code: number; err_code: number; description: string }) {
    super(api_error.description);
    this.name = 'JetStreamPublishError';
  }
}

/** No answer within the timeout, nobody listening on the subject (no stream: 503), or the publisher closed. */
export class PublishUnanswered extends Error {
  constructor(
    message: string,
    readonly code: 'TIMEOUT' | '503' | 'CLOSED',
  ) {
    super(message);
    this.name = 'PublishUnanswered';
  }
}

export interface AckedPublisher {
  /** Publishes `data` and resolves with the stream's acknowledgement (the message is stored). */
  publish(subject: string, data: Uint8Array, headers?: MsgHdrs): Promise<PubAck>;
  /** Fails what is still waiting and stops listening. */
  close(): void;
}

interface Waiting {
  resolve(ack: PubAck): void;
  reject(err: Error): void;
  deadline: number;
  subject: string;
}

const decoder = new TextDecoder();
/** How often answers that did not come in time are failed (a timeout is this much late at most). */
const SWEEP_MS = 100;

/**
 * Acknowledged JetStream publishes on the hot paths (the gateway's rate-limit compare-and-sets and
 * events), each a plain publish with a reply subject under one wildcard subscription. nats.js's
 * `js.publish` makes a request object per publish with its own timer, promise wrappers and a
 * "cancelled" NatsError (a stack capture) built after every answer; here a publish costs a map entry,
 * and one interval fails the late ones. The answers are the same: a PubAck, or JetStream's API error.
 * Replies arrive under the connection's inbox prefix, the only inbox the process may subscribe to.
 */
export function ackedPublisher(nc: NatsConnection, opts: { timeoutMs?: number } = {}): AckedPublisher {
  const timeoutMs = opts.timeoutMs ?? 5_000;
  const prefix = createInbox((nc as unknown as { options?: { inboxPrefix?: string } }).options?.inboxPrefix);
  const waiting = new Map<string, Waiting>();
  let next = 0;
  let closed = false;

  const answer = (msg: Msg): void => {
    const token = msg.subject.slice(prefix.length + 1);
    const w = waiting.get(token);
    if (!w) return; // answered after its timeout
    waiting.delete(token);
    if (msg.headers?.code === 503) return w.reject(new PublishUnanswered(`no stream listens on ${w.subject}`, '503'));
    let ack: { stream?: string; seq?: number; duplicate?: boolean; error?: { code: number; err_code: number; description: string } };
    try {
      ack = JSON.parse(decoder.decode(msg.data));
    } catch {
      return w.reject(new Error(`unreadable answer to a publish on ${w.subject}`));
    }
    if (ack.error) return w.reject(new JetStreamPublishError(ack.error));
    if (!ack.stream) return w.reject(new Error(`invalid acknowledgement of a publish on ${w.subject}`));
    w.resolve({ stream: ack.stream, seq: ack.seq ?? 0, duplicate: ack.duplicate === true });
  };
  const subscription: Subscription = nc.subscribe(`${prefix}.*`, { callback: (err, msg) => (err ? undefined : answer(msg)) });

  // Entries are added in deadline order (one timeout for all), so the sweep stops at the first one due later.
  const sweep = setInterval(() => {
    const now = Date.now();
    for (const [token, w] of waiting) {
      if (w.deadline > now) break;
      waiting.delete(token);
      w.reject(new PublishUnanswered(`no acknowledgement of a publish on ${w.subject} within ${timeoutMs} ms`, 'TIMEOUT'));
    }
  }, SWEEP_MS);
  sweep.unref();

  const close = (): void => {
    if (closed) return;
    closed = true;
    clearInterval(sweep);
    subscription.unsubscribe();
    for (const w of waiting.values()) w.reject(new PublishUnanswered('the publisher was closed', 'CLOSED'));
    waiting.clear();
  };
  void nc.closed().then(close, close);

  // Publishes made during one turn of the event loop (the requests read in one poll) leave in one
  // socket write: nats.js flushes its buffer in a microtask after the first buffered command, so
  // publishes issued one per request callback would each cost a write system call.
  let pending: { token: string; subject: string; data: Uint8Array; headers?: MsgHdrs }[] = [];
  const flush = (): void => {
    if (closed) return; // close() failed them all
    const batch = pending;
    pending = [];
    for (const p of batch) {
      try {
        nc.publish(p.subject, p.data, { reply: `${prefix}.${p.token}`, headers: p.headers });
      } catch (err) {
        const w = waiting.get(p.token);
        waiting.delete(p.token);
        w?.reject(err as Error);
      }
    }
  };

  return {
    publish(subject, data, headers) {
      if (closed) return Promise.reject(new PublishUnanswered('the publisher was closed', 'CLOSED'));
      const token = (++next).toString(36);
      return new Promise<PubAck>((resolve, reject) => {
        waiting.set(token, { resolve, reject, deadline: Date.now() + timeoutMs, subject });
        if (pending.push({ token, subject, data, headers }) === 1) setImmediate(flush);
      });
    },
    close,
  };
}
