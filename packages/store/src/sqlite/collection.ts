/**
 * A collection of the embedded engine. Reads run on the store's reader connection and see committed
 * state only; writes validate and cast outside SQL (schema.ts), then run synchronously on the writer
 * connection inside a SQLite transaction: the caller's `{ tx }`, or the store's next group commit.
 */
import { randomUUID } from 'node:crypto';
import { find as mingoFind } from 'mingo';
import mongoose from 'mongoose';
import { fromMongooseError } from '../errors';
import { upsertSeed } from '../filter';
import { assertSupportedPipeline } from '../pipeline';
import { prepareDocument, timestampPaths, TimestampPaths } from '../schema';
import type { BulkOp, BulkWriteResult, Collection, Filter, FindOptions, ScanOptions, Transaction, Update, UpdateOptions, UpdateResult, WriteOptions } from '../types';
import { applyUpdate, normalizeUpdate } from '../update';
import { checkFilterPaths, checkPathKeys, checkUpdatePaths, cloneQuery, deepEqual, Doc, setPath } from '../values';
import { aggregateBatches } from './aggregate';
import type { Connection } from './connection';
import type { SqliteStore } from './store';
import { pinnedValues } from './indexes';
import { runNow, Table } from './table';

/** Documents per batch of an aggregation (aggregate.ts). */
const AGGREGATE_BATCH = 1000;

interface UpdateOutcome extends UpdateResult {
  before?: Doc;
  after?: Doc;
}

export class SqliteCollection<T extends { _id: string }> implements Collection<T> {
  readonly name: string;
  private readonly caster: mongoose.Query<any, any>;
  private readonly timestamps: TimestampPaths;

  constructor(
    private readonly store: SqliteStore,
    readonly table: Table,
    readonly schema: mongoose.Schema,
    private readonly model: mongoose.Model<any>,
  ) {
    this.name = table.name;
    this.caster = model.find();
    this.timestamps = timestampPaths(schema);
  }

  // ---- reads: committed state only ----

  async findOne(filter: Filter, options: FindOptions = {}): Promise<T | null> {
    const [doc] = await this.find(filter, { ...options, limit: 1 });
    return doc ?? null;
  }

  // A read of the documents an `_id` names runs at once on the reader; any other may step through
  // many rows, so it runs in slices on a scan connection (scans.ts) and never holds the event loop
  // for long. A count SQLite answers from an index alone runs at once too.

  async find(filter: Filter, options: FindOptions = {}): Promise<T[]> {
    const limit = options.limit ? Math.abs(options.limit) : undefined; // 0 means no limit, as in MongoDB
    const cast = this.castFilter(filter);
    checkPathKeys(options.projection);
    const db = this.store.reader(this.table);
    if (!db) return [];
    const read = { sort: options.sort, skip: options.skip, limit };
    const docs = namesIds(cast) ? runNow(db, this.table.findQuery(cast, read)) : await this.store.scans.run(this.table.findQuery(cast, read, true));
    return project(docs, options.projection) as unknown as T[];
  }

  async countDocuments(filter: Filter): Promise<number> {
    const cast = this.castFilter(filter);
    const db = this.store.reader(this.table);
    if (!db) return 0;
    const query = this.table.countQuery(db, cast);
    if (query.native || namesIds(cast)) return runNow(db, query);
    return query.chunked ? this.store.scans.countInChunks(query.chunked) : this.store.scans.run(query);
  }

  scan(filter: Filter, options: ScanOptions = {}): AsyncIterable<T[]> {
    const cast = this.castFilter(filter);
    checkPathKeys(options.projection);
    const size = Math.max(1, options.batchSize ?? 500);
    const { store, table } = this;
    return {
      async *[Symbol.asyncIterator]() {
        if (!store.reader(table)) return;
        const { sql, params, test } = table.scanQuery(cast, options.sort);
        for await (const docs of store.scans.batches(sql, params, size, test)) yield project(docs, options.projection) as unknown as T[];
      },
    };
  }

  async aggregate<R = any>(pipeline: Record<string, unknown>[]): Promise<R[]> {
    assertSupportedPipeline(pipeline);
    let rest = pipeline;
    let filter: Filter = {};
    if (pipeline[0] && '$match' in pipeline[0]) {
      // like MongoDB's aggregate (and mongoose's), $match is not cast through the schema
      filter = pipeline[0].$match as Filter;
      checkFilterPaths(filter);
      rest = pipeline.slice(1);
    }
    if (!this.store.reader(this.table)) return [];
    // matching documents come in batches from a sliced scan (aggregate.ts): never all at once
    const { sql, params, test } = this.table.scanQuery(filter, undefined);
    return (await aggregateBatches(this.store.scans.batches(sql, params, AGGREGATE_BATCH, test), rest)) as R[];
  }

  /** @internal SQLite's plan for a find (tests prove index use). */
  explain(filter: Filter, options: FindOptions = {}) {
    return this.table.explain(this.store.reader(this.table)!, this.castFilter(filter), options);
  }

  // ---- writes ----

  async insertOne(doc: T, options?: WriteOptions): Promise<void> {
    return this.insertMany([doc], options);
  }

  async insertMany(docs: T[], options?: WriteOptions): Promise<void> {
    await this.guard(async () => {
      const prepared = docs.map((d) => this.prepareNew(d));
      if (prepared.length === 0) return;
      await this.store.write(options?.tx, this.table, (db) => {
        for (const doc of prepared) this.table.insert(db, doc);
      });
    });
  }

  async updateOne(filter: Filter, update: Update, options?: UpdateOptions): Promise<UpdateResult> {
    return this.guard(async () => toResult(await this.updateWith(options?.tx, filter, update, false, options?.upsert ?? false)));
  }

  async updateMany(filter: Filter, update: Update, options?: UpdateOptions): Promise<UpdateResult> {
    return this.guard(async () => toResult(await this.updateWith(options?.tx, filter, update, true, options?.upsert ?? false)));
  }

  async findOneAndUpdate(filter: Filter, update: Update, options?: UpdateOptions & { returnDocument?: 'before' | 'after' }): Promise<T | null> {
    return this.guard(async () => {
      const outcome = await this.updateWith(options?.tx, filter, update, false, options?.upsert ?? false);
      const doc = options?.returnDocument === 'after' ? outcome.after : outcome.before;
      return (doc as unknown as T) ?? null;
    });
  }

  async deleteOne(filter: Filter, options?: WriteOptions): Promise<number> {
    return this.guard(async () => {
      const cast = this.castFilter(filter);
      return this.store.write(options?.tx, this.table, (db) => this.deleteIn(db, cast, false));
    });
  }

  async deleteMany(filter: Filter, options?: WriteOptions): Promise<number> {
    return this.guard(async () => {
      const cast = this.castFilter(filter);
      return this.store.write(options?.tx, this.table, (db) => this.deleteIn(db, cast, true));
    });
  }

  async bulkWrite(ops: BulkOp[], options?: WriteOptions): Promise<BulkWriteResult> {
    return this.guard(async () => {
      // validate and cast everything first: a bad op fails the call before anything is applied
      const steps = ops.map((op): ((db: Connection, r: BulkWriteResult) => void) => {
        if ('insertOne' in op) {
          const doc = this.prepareNew(op.insertOne.document);
          return (db, r) => {
            this.table.insert(db, doc);
            r.insertedCount++;
          };
        }
        if ('updateOne' in op || 'updateMany' in op) {
          const multi = 'updateMany' in op;
          const spec = 'updateOne' in op ? op.updateOne : op.updateMany;
          const filter = this.castFilter(spec.filter);
          checkUpdatePaths(spec.update);
          const upsert = 'updateOne' in op ? (op.updateOne.upsert ?? false) : false;
          return (db, r) => {
            const o = this.updateIn(db, filter, spec.update, multi, upsert);
            r.matchedCount += o.matchedCount;
            r.modifiedCount += o.modifiedCount;
            if (o.upsertedId !== undefined) r.upsertedCount++;
          };
        }
        if ('deleteOne' in op || 'deleteMany' in op) {
          const multi = 'deleteMany' in op;
          const filter = this.castFilter('deleteOne' in op ? op.deleteOne.filter : op.deleteMany.filter);
          return (db, r) => {
            r.deletedCount += this.deleteIn(db, filter, multi);
          };
        }
        throw new Error(`bulkWrite: unsupported operation ${Object.keys(op as object).join(',')}`);
      });
      return this.store.write(options?.tx, this.table, (db) => {
        const result: BulkWriteResult = { insertedCount: 0, matchedCount: 0, modifiedCount: 0, deletedCount: 0, upsertedCount: 0 };
        for (const step of steps) step(db, result);
        return result;
      });
    });
  }

  // ---- write steps: synchronous, on the writer inside its transaction ----

  private updateWith(tx: Transaction | undefined, filter: Filter, update: Update, multi: boolean, upsert: boolean): Promise<UpdateOutcome> {
    const cast = this.castFilter(filter);
    checkUpdatePaths(update);
    return this.store.write(tx, this.table, (db) => this.updateIn(db, cast, update, multi, upsert));
  }

  private updateIn(db: Connection, filter: Filter, update: Update, multi: boolean, upsert: boolean): UpdateOutcome {
    // read first, then write: an updated document is never matched again
    const targets = this.table.find(db, filter, { limit: multi ? undefined : 1 });
    if (targets.length === 0) return upsert ? this.upsertIn(db, filter, update) : { matchedCount: 0, modifiedCount: 0 };
    const now = new Date();
    let modifiedCount = 0;
    let before: Doc | undefined;
    let after: Doc | undefined;
    for (const current of targets) {
      let next = current;
      const updated = applyUpdate(current, update, filter, false);
      if (!deepEqual(updated, current)) {
        if (updated._id !== current._id) throw new Error(`Performing an update on the path '_id' would modify the immutable field '_id'`);
        // the whole resulting document must still satisfy the schema (and gets cast, e.g. '5' -> 5)
        const cast = prepareDocument(this.model, updated, { isNew: false, collection: this.name });
        if (!deepEqual(cast, current)) next = cast;
      }
      if (next !== current) {
        const updatedAt = this.timestamps.updatedAt;
        if (updatedAt && !setsPath(update, updatedAt)) setPath(next, updatedAt, now);
        this.table.replace(db, next, current);
        modifiedCount++;
      }
      before ??= current;
      after ??= next;
    }
    return { matchedCount: targets.length, modifiedCount, before, after };
  }

  private upsertIn(db: Connection, filter: Filter, update: Update): UpdateOutcome {
    const seeded = applyUpdate(upsertSeed(filter), update, undefined, true);
    // callers generate ids; an upsert that names none gets a UUID (never an ObjectId), on both adapters
    if (seeded._id === undefined || seeded._id === null) seeded._id = randomUUID();
    const doc = this.prepareNew(seeded);
    this.table.insert(db, doc);
    return { matchedCount: 0, modifiedCount: 0, upsertedId: doc._id, after: doc };
  }

  private deleteIn(db: Connection, filter: Filter, multi: boolean): number {
    const deleted = this.table.deleteWhere(db, filter, multi ? undefined : 1);
    if (deleted !== undefined) return deleted;
    const targets = this.table.find(db, filter, { limit: multi ? undefined : 1 });
    for (const doc of targets) this.table.delete(db, doc._id);
    return targets.length;
  }

  // ---- helpers ----

  private prepareNew(doc: unknown): Doc {
    if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw new TypeError(`${this.name}: a document must be an object`);
    return prepareDocument(this.model, doc as Record<string, unknown>, { isNew: true, collection: this.name, timestamps: this.timestamps });
  }

  /** Both adapters report schema problems in writes (including casting) as DocumentValidationError. */
  private async guard<R>(fn: () => Promise<R>): Promise<R> {
    try {
      return await fn();
    } catch (err) {
      throw fromMongooseError(err, this.name);
    }
  }

  /** Casts filter values through the schema (strings to Dates, numbers, lowercase setters...), as mongoose does on MongoDB. */
  private castFilter(filter: Filter): Filter {
    if (!filter || Object.keys(filter).length === 0) return {};
    // `__proto__`, `constructor`, `prototype` segments never reach the path walkers (values.ts)
    checkFilterPaths(filter);
    return this.caster.cast(this.model, cloneQuery(filter)) as Filter;
  }
}

/** Documents decoded from rows are the caller's own: a projection only reshapes them. */
function project(docs: Doc[], projection?: Record<string, 0 | 1>): Doc[] {
  if (!projection || Object.keys(projection).length === 0) return docs;
  return mingoFind(docs, {}, projection).all() as Doc[];
}

/** Whether a (cast) filter names the documents it reads by `_id` (so few that a read runs at once). */
function namesIds(filter: Filter): boolean {
  const ids = pinnedValues(filter, '_id');
  return ids !== undefined && ids.length <= 1000;
}

function toResult(o: UpdateOutcome): UpdateResult {
  const result: UpdateResult = { matchedCount: o.matchedCount, modifiedCount: o.modifiedCount };
  if (o.upsertedId !== undefined) result.upsertedId = o.upsertedId;
  return result;
}

/** Whether an update sets `path` itself (then timestamps leave it alone, as mongoose does). */
function setsPath(update: Update, path: string): boolean {
  const modifier = normalizeUpdate(update, false);
  return Object.values(modifier).some((fields) => fields && typeof fields === 'object' && path in fields);
}
