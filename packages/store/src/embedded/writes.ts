/**
 * Writes of the embedded store, computed against a WriteBatch in one synchronous step (the store
 * commits the batch): documents are cast and validated through the collection's schema, unique
 * keys checked against the batch's view, timestamps set as mongoose sets them.
 */
import { randomUUID } from 'node:crypto';
import mongoose from 'mongoose';
import { upsertSeed } from '../filter';
import { prepareDocument, TimestampPaths } from '../schema';
import type { Filter, Update, UpdateResult } from '../types';
import { applyUpdate, normalizeUpdate } from '../update';
import { deepEqual, Doc, setPath } from '../values';
import { CollectionData } from './collection-data';
import { matching } from './scan';
import { WriteBatch } from './write-batch';

/** What a write needs of its collection. */
export interface WriteTarget {
  readonly name: string;
  readonly data: CollectionData;
  readonly model: mongoose.Model<any>;
  readonly timestamps: TimestampPaths;
}

export interface UpdateOutcome extends UpdateResult {
  before?: Doc;
  after?: Doc;
}

export function prepareNew(t: WriteTarget, doc: unknown): Doc {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw new TypeError(`${t.name}: a document must be an object`);
  return prepareDocument(t.model, doc as Record<string, unknown>, { isNew: true, collection: t.name, timestamps: t.timestamps });
}

export function insertIn(t: WriteTarget, batch: WriteBatch, doc: Doc): void {
  batch.checkUnique(t.data, doc, true);
  batch.set(t.data, doc._id, doc);
}

export function updateIn(t: WriteTarget, batch: WriteBatch, filter: Filter, update: Update, multi: boolean, upsert: boolean): UpdateOutcome {
  // collect first, then write: an updated document must not be matched again (and iteration must not see our own changes)
  const targets = matching(t.data, filter, batch, multi ? Infinity : 1);
  if (targets.length === 0) return upsert ? upsertIn(t, batch, filter, update) : { matchedCount: 0, modifiedCount: 0 };

  const now = new Date();
  let modifiedCount = 0;
  let before: Doc | undefined;
  let after: Doc | undefined;
  for (const current of targets) {
    let next = current;
    const updated = applyUpdate(current, update, filter, false);
    if (!deepEqual(updated, current)) {
      if (updated._id !== current._id) {
        throw new Error(`Performing an update on the path '_id' would modify the immutable field '_id'`);
      }
      // the whole resulting document must still satisfy the schema (and gets cast, e.g. '5' -> 5)
      const cast = prepareDocument(t.model, updated, { isNew: false, collection: t.name });
      if (!deepEqual(cast, current)) next = cast;
    }
    if (next !== current) {
      const updatedAt = t.timestamps.updatedAt;
      if (updatedAt && !setsPath(update, updatedAt)) setPath(next, updatedAt, now);
      batch.checkUnique(t.data, next, false);
      batch.set(t.data, next._id, next);
      modifiedCount++;
    }
    before ??= current;
    after ??= next;
  }
  return { matchedCount: targets.length, modifiedCount, before, after };
}

function upsertIn(t: WriteTarget, batch: WriteBatch, filter: Filter, update: Update): UpdateOutcome {
  const seeded = applyUpdate(upsertSeed(filter), update, undefined, true);
  // callers generate ids; an upsert that names none gets a UUID (never an ObjectId), on both adapters
  if (seeded._id === undefined || seeded._id === null) seeded._id = randomUUID();
  const doc = prepareDocument(t.model, seeded, { isNew: true, collection: t.name, timestamps: t.timestamps });
  insertIn(t, batch, doc);
  return { matchedCount: 0, modifiedCount: 0, upsertedId: doc._id, after: doc };
}

export function deleteIn(t: WriteTarget, batch: WriteBatch, filter: Filter, multi: boolean): number {
  const targets = matching(t.data, filter, batch, multi ? Infinity : 1);
  for (const doc of targets) batch.set(t.data, doc._id, null);
  return targets.length;
}

export function toResult(o: UpdateOutcome): UpdateResult {
  const result: UpdateResult = { matchedCount: o.matchedCount, modifiedCount: o.modifiedCount };
  if (o.upsertedId !== undefined) result.upsertedId = o.upsertedId;
  return result;
}

/** Whether an update sets `path` itself (then timestamps leave it alone, as mongoose does). */
function setsPath(update: Update, path: string): boolean {
  const modifier = normalizeUpdate(update, false);
  return Object.values(modifier).some((fields) => fields && typeof fields === 'object' && path in fields);
}
