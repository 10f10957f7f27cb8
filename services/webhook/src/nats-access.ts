// What the webhook service does on NATS: its consumers start from these declarations and its NATS
// user's permissions are derived from them (docs/architecture.md "Internal traffic").
import { serviceAccess } from '@mailer/nats';
import { jobSubjects } from '@mailer/nats/facts';

export const NATS_ACCESS = serviceAccess({
  name: 'webhook',
  publishes: [jobSubjects('webhook')],
  consumers: {
    fanOut: { stream: 'DOMAIN', durable: 'webhook-fan-out', filterSubject: 'domain.>' },
    deliveries: { stream: 'JOBS', durable: 'webhook-delivery', filterSubject: jobSubjects('webhook') },
  },
});
