// What the form service does on NATS: its consumers start from these declarations and its NATS
// user's permissions are derived from them (docs/architecture.md "Internal traffic").
import { ACCOUNT_NAMES_BUCKET, serviceAccess } from '@mailer/nats';
import { factSubject, factSubjects, jobSubjects } from '@mailer/nats/facts';

export const NATS_ACCESS = serviceAccess({
  name: 'form',
  publishes: [...factSubjects('form.'), jobSubjects('form-submission')],
  // The confirm page names the account; the gateway writes the names.
  readBuckets: [ACCOUNT_NAMES_BUCKET],
  consumers: {
    fieldDeleted: { stream: 'DOMAIN', durable: 'form-field-deleted', filterSubject: factSubject('field.deleted') },
    submissionJobs: { stream: 'JOBS', durable: 'form-submission-decisions', filterSubject: jobSubjects('form-submission') },
  },
});
