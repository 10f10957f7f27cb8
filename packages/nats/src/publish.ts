import { Context, context, propagation, ROOT_CONTEXT, TextMapGetter } from '@opentelemetry/api';
import { headers as natsHeaders, JetStreamClient, MsgHdrs } from 'nats';

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
