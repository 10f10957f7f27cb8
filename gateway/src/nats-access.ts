// What the gateway does on NATS: the EVENTS stream it publishes /events to and its KV buckets (keys,
// budgets, idempotency), declared from here at start; its NATS user's permissions are derived from
// the same declaration (docs/architecture.md "Internal traffic").
import type { NatsAccess } from '@mailer/nats/client';
import { customEventSubject } from '@mailer/nats/facts';
import { BUCKETS } from './kv/buckets';

export const NATS_ACCESS: NatsAccess = {
  name: 'gateway',
  streams: ['EVENTS'],
  buckets: Object.values(BUCKETS).map((b) => b.name),
  publishes: [customEventSubject('>')],
  consumers: {},
};
