// Entries into ONCE automations (collection 'automation_once_entries'): one per automation and
// subscriber that ever started a run of an automation whose entry rule is ONCE, written in the
// transaction that creates the run. The entry, not the run, is what keeps the subscriber from
// entering again (its unique index: of two concurrent events only one enters), so finished runs can
// be pruned (RUN_RETENTION_DAYS) while the entries stay: they have no retention, and deleting the
// automation keeps them as it keeps its runs.
import { mongoose, type Collection, type Store, type Transaction } from '@mailer/store';

export interface OnceEntryDoc {
  _id: string; // the id of the run that entered
  accountId: string;
  automationId: string;
  subscriberId: string;
  enteredAt: Date;
}

export const ONCE_ENTRIES = 'automation_once_entries';

const onceEntrySchema = new mongoose.Schema(
  {
    _id: { type: String, required: true },
    accountId: { type: String, required: true },
    automationId: { type: String, required: true },
    subscriberId: { type: String, required: true },
    enteredAt: { type: Date, required: true },
  },
  { versionKey: false },
);
// The entry rule ONCE, enforced by the store whatever two concurrent events do.
onceEntrySchema.index({ accountId: 1, automationId: 1, subscriberId: 1 }, { unique: true });

export const onceEntryCollection = (store: Store): Collection<OnceEntryDoc> => store.collection<OnceEntryDoc>(ONCE_ENTRIES, onceEntrySchema);

export function onceEntriesOf(entries: Collection<OnceEntryDoc>, accountId: string) {
  return {
    /** Whether the subscriber ever entered the ONCE automation. */
    has: async (automationId: string, subscriberId: string): Promise<boolean> => (await entries.countDocuments({ accountId, automationId, subscriberId })) > 0,
    async insert(docs: OnceEntryDoc[], tx: Transaction): Promise<void> {
      if (docs.some((d) => d.accountId !== accountId)) throw new Error('onceEntriesOf.insert: an entry belongs to another account');
      if (docs.length) await entries.insertMany(docs, { tx });
    },
  };
}
