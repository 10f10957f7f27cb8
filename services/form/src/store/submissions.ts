// Public submissions (collection 'submissions'): what a reader posted to a form, stored with its job
// before the 202, then the decision the submission job took (the API contract "Forms": the submissions log).
// Every query is scoped to one account; the public route finds the account through the form.
//
// A consent signup from a custom event (the API contract "Events and automations", app/consent-signup.ts) is
// recorded here too, without a form (formId null, _id and eventId the event's id): its confirmation
// mail counts for the cooldown and the daily quota like a form's, and its confirm link names it like
// a submission. No form's log lists it; the event's record in GET /events shows its decision.
import { DuplicateKeyError, mongoose, type Store, type Transaction } from '@mailer/store';
import type { FormDecision } from '../domain/decision';
import type { SubmittedValue } from '../domain/submission';

const { Schema } = mongoose;

export interface SubmissionDoc {
  _id: string;
  accountId: string;
  /** Null for a consent signup from a custom event (eventId). */
  formId: string | null;
  /** The custom event whose consent this signup is (then also the _id); absent for form submissions. */
  eventId?: string;
  /** Lowercase trimmed. */
  email: string;
  values: Record<string, SubmittedValue>;
  /** The consent text the reader agreed to (a custom event's consent: its `source`), and when. */
  consent: { text: string; givenAt: Date } | null;
  /** The reader's address as the gateway forwarded it (abuse investigation; never shown to readers). */
  clientAddress: string;
  submittedAt: Date;
  /** Null until decided, and for a single opt-in form once decided. */
  decision: FormDecision | null;
  subscriberId: string | null;
  /** The subscriber's status right after the signup (recorded for consent signups: the event's answer repeats it). */
  subscriberStatus?: string | null;
  /** When this submission's confirmation mail was queued (decision QUEUED). */
  confirmationSentAt: Date | null;
  /** Null until the job decided it: a decided submission is never decided again. */
  processedAt: Date | null;
  /** When the reader confirmed through this submission's confirm link (POST /public/confirm/{token}); the first time only. */
  confirmedAt?: Date | null;
}

export const SUBMISSIONS = 'submissions';

const submissionSchema = new Schema(
  {
    _id: { type: String, required: true },
    accountId: { type: String, required: true },
    formId: { type: String, default: null },
    eventId: { type: String },
    email: { type: String, required: true },
    values: { type: Schema.Types.Mixed, default: {} },
    consent: { type: new Schema({ text: { type: String, required: true }, givenAt: { type: Date, required: true } }, { _id: false }), default: null },
    clientAddress: { type: String, default: '' },
    submittedAt: { type: Date, required: true },
    decision: { type: String, default: null },
    subscriberId: { type: String, default: null },
    subscriberStatus: { type: String },
    confirmationSentAt: { type: Date, default: null },
    processedAt: { type: Date, default: null },
    confirmedAt: { type: Date, default: null },
  },
  { versionKey: false, minimize: false },
);
submissionSchema.index({ accountId: 1, formId: 1, submittedAt: -1 });
submissionSchema.index({ accountId: 1, email: 1, confirmationSentAt: 1 });
submissionSchema.index({ accountId: 1, confirmationSentAt: 1 });

export interface DecisionRecord {
  decision: FormDecision | null;
  subscriberId: string | null;
  confirmationSentAt: Date | null;
  processedAt: Date;
  subscriberStatus?: string | null;
}

/**
 * Whose confirmation mails a count covers: one form's, the consent signups' of custom events
 * (formId null), or every one of the account.
 */
export type ConfirmationScope = { formId: string | null } | 'ANY';

export interface SubmissionPage {
  items: SubmissionDoc[];
  totalItems: number;
}

/** An account's form submissions; each is kept `retentionDays` (FORM_SUBMISSION_RETENTION_DAYS) after it was submitted. */
export function submissionRepository(store: Store, retentionDays = 90) {
  const submissions = store.collection<SubmissionDoc>(SUBMISSIONS, submissionSchema, { expireAfter: { path: 'submittedAt', days: retentionDays } });
  return {
    insert: (doc: SubmissionDoc, tx: Transaction) => submissions.insertOne(doc, { tx }),
    get: (accountId: string, submissionId: string) => submissions.findOne({ _id: submissionId, accountId }),
    /** Records the decision once: false when the submission was decided already (a redelivered job). */
    async recordDecision(accountId: string, submissionId: string, record: DecisionRecord, tx?: Transaction): Promise<boolean> {
      const r = await submissions.updateOne({ _id: submissionId, accountId, processedAt: null }, { $set: record }, { tx });
      return r.modifiedCount > 0;
    },
    /** Records the reader's confirmation through this submission's link, the first time only. */
    async recordConfirmation(accountId: string, submissionId: string, at: Date): Promise<void> {
      await submissions.updateOne({ _id: submissionId, accountId, confirmedAt: null }, { $set: { confirmedAt: at } });
    },
    /** Confirmation mails queued since `since` to the address, of one scope. */
    confirmationsTo: (accountId: string, email: string, since: Date, scope: ConfirmationScope) =>
      submissions.countDocuments({ accountId, email, confirmationSentAt: { $gte: since }, ...(scope === 'ANY' ? {} : { formId: scope.formId }) }),
    /** Stores a consent signup's record unless its event stored it before (false then). */
    async insertIfAbsent(doc: SubmissionDoc): Promise<boolean> {
      try {
        await submissions.insertOne(doc);
        return true;
      } catch (err) {
        if (err instanceof DuplicateKeyError) return false;
        throw err;
      }
    },
    /** Confirmation mails the account's forms queued since `since`. */
    confirmationsOfAccount: (accountId: string, since: Date) => submissions.countDocuments({ accountId, confirmationSentAt: { $gte: since } }),
    /** A form's submissions, newest first; `decision` filters (the string 'NONE' never matches a stored one). */
    async page(accountId: string, formId: string, q: { decision?: string; pageNumber: number; pageSize: number }): Promise<SubmissionPage> {
      const filter = { accountId, formId, ...(q.decision ? { decision: q.decision } : {}) };
      const [items, totalItems] = await Promise.all([
        submissions.find(filter, { sort: { submittedAt: -1, _id: -1 }, skip: (q.pageNumber - 1) * q.pageSize, limit: q.pageSize }),
        submissions.countDocuments(filter),
      ]);
      return { items, totalItems };
    },
  };
}
export type SubmissionRepository = ReturnType<typeof submissionRepository>;
