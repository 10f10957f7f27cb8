// What the subscriber service does on NATS (publish its facts, through the outbox); its NATS user's
// permissions are derived from this declaration (docs/architecture.md "Internal traffic").
import { serviceAccess } from '@mailer/nats';
import { factSubjects } from '@mailer/nats/facts';

export const NATS_ACCESS = serviceAccess({
  name: 'subscriber',
  publishes: factSubjects('subscriber.', 'field.', 'tag.', 'topic.'),
  consumers: {},
});
