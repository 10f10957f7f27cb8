import { Context, context, propagation, ROOT_CONTEXT, TextMapGetter } from '@opentelemetry/api';
import { createInbox, headers as natsHeaders, type JetStreamClient, type Msg, type MsgHdrs, type NatsConnection } from 'nats';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function encodeJson(payload: unknown): Uint8Array {
  // JSON.stringify(undefined) is undefined, which is not a message; send an explicit null instead.
  return encoder.encode(JSON.stringify(payload ?? null));
}

export function decodeJson(data: Uint8Array): unknown {
  return data.length === 0 ? null : JSON.parse(decoder.decode(data));
}

/** Flattens NATS headers (multi-valued) to the single-valued record handlers and propagators use. */
export function headersToRecord(h: MsgHdrs | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!h) return out;
  for (const key of h.keys()) out[key] = h.get(key);
  return out;
}

/** Serialises the given (default: active) trace context into a plain header record. */
export function traceHeaders(ctx: Context = context.active()): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  return carrier;
}

// Header names may have been re-cased on the way (proxies, other clients); propagators ask in lower case.
const recordGetter: TextMapGetter<Record<string, string>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => {
    if (key in carrier) return carrier[key];
    const lower = key.toLowerCase();
    for (const k of Object.keys(carrier)) if (k.toLowerCase() === lower) return carrier[k];
    return undefined;
  },
};

/** The trace context a message was published in, to run its handler under. */
export function extractTraceContext(headers: Record<string, string>): Context {
  return propagation.extract(ROOT_CONTEXT, headers, recordGetter);
}

export interface PublishOptions {
  /** De-duplication key: JetStream stores one message per msgID within the stream's duplicate window. */
  msgID?: string;
  headers?: Record<string, string>;
}

export interface PublishResult {
  seq: number;
  /** True when JetStream already held a message with this msgID (nothing new was stored). */
  duplicate: boolean;
}

/**
 * Publishes a JSON payload and waits for the stream's acknowledgement, so a resolved promise means the
 * message is persisted. The active trace context travels in the headers; caller headers that already
 * carry one (an outbox record written inside a traced request) are kept when nothing is active now.
 */
export async function publish(
  js: JetStreamClient,
  subject: string,
  payload: unknown,
  opts: PublishOptions = {},
): Promise<PublishResult> {
  const h = natsHeaders();
  for (const [key, value] of Object.entries(opts.headers ?? {})) h.set(key, value);
  for (const [key, value] of Object.entries(traceHeaders())) h.set(key, value);
  const ack = await js.publish(subject, encodeJson(payload), {
    msgID: opts.msgID,
    headers: h,
  });
  return { seq: ack.seq, duplicate: ack.duplicate };
}

/** One message of publishBatch. */
export interface BatchMessage {
  subject: string;
  payload: unknown;
  msgID?: string;
  headers?: Record<string, string>;
}

/** How long publishBatch waits for the acknowledgements of a batch (nats.js' JetStream default). */
export const BATCH_ACK_TIMEOUT_MS = 5_000;

/**
 * Publishes messages in order on the JetStream client's connection and collects their
 * acknowledgements together: one reply subscription per batch, where `js.publish` makes a request per
 * message (its own timer, promise and a cancellation error built after every answer). Resolves with
 * one outcome per message, in order: its PubAck, or the error it met (the stream's refusal, no stream
 * for the subject, no answer within `timeoutMs`). The given headers are sent as they are (no trace
 * context is added: callers pass the one stored with each message).
 */
export async function publishBatch(js: JetStreamClient, messages: readonly BatchMessage[], timeoutMs = BATCH_ACK_TIMEOUT_MS): Promise<Array<PublishResult | Error>> {
  if (messages.length === 0) return [];
  const nc = connectionOf(js);
  // Under the process's own inbox prefix, the only replies its NATS user may receive.
  const inbox = createInbox((nc as { options?: { inboxPrefix?: string } }).options?.inboxPrefix);
  const outcomes: Array<PublishResult | Error | undefined> = new Array(messages.length);
  let waiting = messages.length;
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  const sub = nc.subscribe(`${inbox}.*`, {
    callback: (err, reply) => {
      if (err) return; // the subscription failed: every message waits for its timeout
      const i = Number(reply.subject.slice(inbox.length + 1));
      if (!(i >= 0 && i < messages.length) || outcomes[i] !== undefined) return;
      outcomes[i] = pubAckOf(reply, messages[i].subject);
      if (--waiting === 0) finish();
    },
  });
  const timer = setTimeout(finish, timeoutMs);
  try {
    messages.forEach((m, i) => {
      const h = natsHeaders();
      if (m.headers) for (const key of Object.keys(m.headers)) h.set(key, m.headers[key]);
      if (m.msgID !== undefined) h.set('Nats-Msg-Id', m.msgID);
      nc.publish(m.subject, encodeJson(m.payload), { reply: `${inbox}.${i}`, headers: h });
    });
    await finished;
  } finally {
    clearTimeout(timer);
    sub.unsubscribe();
  }
  return messages.map((m, i) => outcomes[i] ?? new Error(`no acknowledgement from JetStream within ${timeoutMs} ms (subject ${m.subject})`));
}

/** The connection a JetStream client publishes on (nats.js keeps it as `nc`). */
function connectionOf(js: JetStreamClient): NatsConnection {
  const nc = (js as { nc?: NatsConnection }).nc;
  if (!nc) throw new Error('publishBatch: this JetStream client does not expose its connection');
  return nc;
}

/** A JetStream publish acknowledgement, or the error it reports. */
function pubAckOf(reply: Msg, subject: string): PublishResult | Error {
  // A status message instead of an answer: 503, no stream listens on the subject.
  if (reply.headers?.hasError) return new Error(`JetStream did not store the message on ${subject}: ${reply.headers.code} ${reply.headers.description || 'no responders'}`);
  try {
    const ack = decodeJson(reply.data) as { stream?: string; seq?: number; duplicate?: boolean; error?: { code?: number; description?: string } };
    if (ack?.error) return new Error(`JetStream refused the message on ${subject}: ${ack.error.code ?? ''} ${ack.error.description ?? ''}`.trim());
    if (!ack?.stream || typeof ack.seq !== 'number') return new Error(`JetStream answered the message on ${subject} without an acknowledgement`);
    return { seq: ack.seq, duplicate: ack.duplicate === true };
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  }
}
