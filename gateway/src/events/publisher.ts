import { createHash } from 'node:crypto';
import type { NatsConnection } from 'nats';
import { publish } from '@mailer/nats';
import { customEventSubject, type CustomEvent } from '@mailer/nats/facts';
import type { JsonKv } from '../kv/json-kv';

/** The message stored on the EVENTS stream, subject `events.<accountId>` (read by messaging); defined in @mailer/nats/facts. */
export type { CustomEvent };

export interface EventSink {
  /** Resolves only after JetStream acknowledged (stored) the message. */
  publish(event: CustomEvent): Promise<{ duplicate: boolean }>;
  /** Largest encoded event the stream accepts (the server's max_payload, less room for headers). */
  maxEventBytes(): number;
}

/** Room kept for message headers (msgID, trace context) within the server's max_payload. */
const HEADER_ALLOWANCE = 2_048;

/** `guard`: the declared JetStream's, so a publish fails at once while NATS is away (json-kv.ts). */
export function jetStreamEventSink(nc: NatsConnection, guard: <R>(op: () => Promise<R>) => Promise<R> = (op) => op()): EventSink {
  const js = nc.jetstream();
  return {
    maxEventBytes: () => (nc.info?.max_payload ?? 1024 * 1024) - HEADER_ALLOWANCE,
    async publish(event) {
      // msgID = eventId: concurrent retries of one idempotencyKey inside the stream's duplicate window
      // are stored once, and the PubAck says so.
      const ack = await guard(() => publish(js, customEventSubject(event.accountId), event, { msgID: event.eventId }));
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
