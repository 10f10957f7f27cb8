// What the messaging service does on NATS: its consumers start from these declarations and its NATS
// user's permissions are derived from them (docs/architecture.md "Internal traffic").
import { serviceAccess } from '@mailer/nats';
import { factSubjects, jobSubjects } from '@mailer/nats/facts';

export const NATS_ACCESS = serviceAccess({
  name: 'messaging',
  publishes: [...factSubjects('email.', 'event.', 'broadcast.'), jobSubjects('email'), jobSubjects('subscriber-status'), jobSubjects('automation-run')],
  consumers: {
    customEvents: { stream: 'EVENTS', durable: 'messaging-events', filterSubject: 'events.>' },
    emailJobs: { stream: 'JOBS', durable: 'messaging-email-delivery', filterSubject: jobSubjects('email') },
    subscriberStatus: { stream: 'JOBS', durable: 'messaging-subscriber-status', filterSubject: jobSubjects('subscriber-status') },
    automationRuns: { stream: 'JOBS', durable: 'messaging-automation-runs', filterSubject: jobSubjects('automation-run') },
  },
});
