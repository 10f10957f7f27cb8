import { createHash } from 'node:crypto';
import { headers, type NatsConnection } from 'nats';
import { traceHeaders, type AckedPublisher } from '@mailer/nats/client';
import { customEventSubject, type CustomEvent } from '@mailer/nats/facts';
import type { JsonKv } from '../kv/json-kv';

/** The message stored on the EVENTS stream, subject `events.<accountId>` (read by messaging); defined in @mailer/nats/facts. */
export type { CustomEvent };

export interface EventSink {
  /** Stores the event, `data` being its JSON (encoded once, by the caller that checked its size); resolves only after JetStream acknowledged it. */
  publish(event: CustomEvent, data: Uint8Array): Promise<{ duplicate: boolean }>;
  /** Largest encoded event the stream accepts (the server's max_payload, less room for headers). */
  maxEventBytes(): number;
}

/** Room kept for message headers (msgID, trace context) within the server's max_payload. */
const HEADER_ALLOWANCE = 2_048;

/** `guard`: the declared JetStream's, so a publish fails at once while NATS is away (json-kv.ts). */
export function jetStreamEventSink(nc: NatsConnection, publisher: AckedPublisher, guard: <R>(op: () => Promise<R>) => Promise<R> = (op) => op()): EventSink {
  return {
    maxEventBytes: () => (nc.info?.max_payload ?? 1024 * 1024) - HEADER_ALLOWANCE,
    async publish(event, data) {
      // msgID = eventId: concurrent retries of one idempotencyKey inside the stream's duplicate window
      // are stored once, and the PubAck says so. The active trace context travels along.
      const h = headers();
      h.set('Nats-Msg-Id', event.eventId);
      for (const [key, value] of Object.entries(traceHeaders())) h.set(key, value);
      const ack = await guard(() => publisher.publish(customEventSubject(event.accountId), data, h));
      return { duplicate: ack.duplicate };
    },
  };
}

/**
 * idempotencyKeys accepted in the last 7 days (KV bucket TTL), per account. A retry found here is
 * answered from the record without publishing again; the stream's duplicate window covers the
 * short gap between a publish and this record.
 */
export class AcceptedEventKeys {
  constructor(private readonly kv: JsonKv) {}

  static key(accountId: string, idempotencyKey: string): string {
    return `${accountId}.${createHash('sha256').update(idempotencyKey).digest('hex')}`;
  }

  async find(accountId: string, idempotencyKey: string): Promise<string | null> {
    const entry = await this.kv.get<{ eventId: string }>(AcceptedEventKeys.key(accountId, idempotencyKey));
    return entry?.value.eventId ?? null;
  }

  async remember(accountId: string, idempotencyKey: string, eventId: string, acceptedAt: string): Promise<void> {
    await this.kv.put(AcceptedEventKeys.key(accountId, idempotencyKey), { eventId, acceptedAt });
  }
}
