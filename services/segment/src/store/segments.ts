/**
 * Saved segments (collection 'segments'). The expression is stored in the domain shape
 * (domain/expression.ts, plain JSON), already validated. `references` holds the segment ids the
 * expression references (CONTAINED_IN / NOT_CONTAINED_IN), so "is this segment in use" is one
 * indexed query.
 *
 * Decision: names are unique per account, compared exactly (case-sensitive, after trimming):
 * unique index {accountId, name}; a clash is `409 segment_name_taken`. Segments are chosen by name
 * in the UI and in automations, so two segments with one name would be ambiguous.
 */
import { conflict } from '@mailer/kit';
import { Collection, DuplicateKeyError, Store, mongoose } from '@mailer/store';
import type { SegmentExpression } from '../domain/expression';

const { Schema } = mongoose;

export interface SegmentDoc {
  _id: string;
  accountId: string;
  name: string;
  expression: SegmentExpression;
  references: string[];
  createdAt: Date;
  updatedAt: Date;
}

export const segmentSchema = new Schema(
  {
    _id: String,
    accountId: { type: String, required: true },
    name: { type: String, required: true },
    expression: { type: Schema.Types.Mixed, required: true },
    references: [String],
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);
// accountId leads every index: every query is scoped to one account.
segmentSchema.index({ accountId: 1, name: 1 }, { unique: true });
segmentSchema.index({ accountId: 1, references: 1 });

export function segmentsCollection(store: Store): Collection<SegmentDoc> {
  return store.collection<SegmentDoc>('segments', segmentSchema);
}

/** What an update of a segment may change. */
export type SegmentChanges = Pick<SegmentDoc, 'name' | 'expression' | 'references' | 'updatedAt'>;

const nameTaken = (name: string) => conflict('segment_name_taken', `a segment named "${name}" already exists`, [{ path: 'name', problem: 'already used by another segment' }]);

/**
 * One account's saved segments. Every query filters by the account first (docs/architecture.md): the account is
 * fixed when the repository is made, so no method can read or write another account's segment.
 * A name clash (unique index) is translated here into `409 segment_name_taken`.
 */
export function segmentsOf(segments: Collection<SegmentDoc>, accountId: string) {
  return {
    accountId,
    /** The account's segments, oldest first. */
    list: (): Promise<SegmentDoc[]> => segments.find({ accountId }, { sort: { createdAt: 1, _id: 1 } }),
    /** The account's segments by name. */
    listByName: (): Promise<SegmentDoc[]> => segments.find({ accountId }, { sort: { name: 1, _id: 1 } }),
    get: (id: string): Promise<SegmentDoc | null> => segments.findOne({ _id: id, accountId }),
    /** The other segments whose expression references the segment, by name. */
    referencing: (id: string): Promise<SegmentDoc[]> => segments.find({ accountId, references: id, _id: { $ne: id } }, { sort: { name: 1 } }),
    async insert(doc: Omit<SegmentDoc, 'accountId'>): Promise<SegmentDoc> {
      const stored: SegmentDoc = { ...doc, accountId };
      try {
        await segments.insertOne(stored);
      } catch (err) {
        if (err instanceof DuplicateKeyError) throw nameTaken(doc.name);
        throw err;
      }
      return stored;
    },
    /** False when the segment does not exist (any more). */
    async update(id: string, set: SegmentChanges): Promise<boolean> {
      try {
        return (await segments.updateOne({ _id: id, accountId }, { $set: set })).matchedCount > 0;
      } catch (err) {
        if (err instanceof DuplicateKeyError) throw nameTaken(set.name);
        throw err;
      }
    },
    remove: async (id: string): Promise<void> => {
      await segments.deleteOne({ _id: id, accountId });
    },
  };
}
export type SegmentRepository = ReturnType<typeof segmentsOf>;
