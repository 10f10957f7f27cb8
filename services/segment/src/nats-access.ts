// What the segment service does on NATS: its consumer starts from this declaration and its NATS
// user's permissions are derived from it (docs/architecture.md "Internal traffic").
import { ANY_DURABLE, serviceAccess } from '@mailer/nats';

export const NATS_ACCESS = serviceAccess({
  name: 'segment',
  publishes: [],
  consumers: {
    // Named by SEGMENT_PROJECTION_DURABLE (a new name rebuilds the projection from the stream).
    projection: { stream: 'DOMAIN', durable: ANY_DURABLE, filterSubject: 'domain.>' },
  },
});
