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
import { Collection, Store, mongoose } from '@mailer/store';
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
