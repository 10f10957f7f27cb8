/**
 * A collection of the embedded store: reads never take the write lock and see committed state
 * only (scan.ts); writes are validated outside the lock, then applied to a batch in one
 * synchronous step (writes.ts) that the store commits (store.ts).
 */
import { Aggregator, find as mingoFind } from 'mingo';
import mongoose from 'mongoose';
import { fromMongooseError } from '../errors';
import { assertSupportedPipeline } from '../pipeline';
import { timestampPaths } from '../schema';
import { sortPage } from '../sort';
import type { BulkOp, BulkWriteResult, Collection, Filter, FindOptions, Update, UpdateOptions, UpdateResult, WriteOptions } from '../types';
import { checkFilterPaths, checkPathKeys, checkUpdatePaths, cloneDeep, cloneQuery, Doc } from '../values';
import { CollectionData } from './collection-data';
import { matching, SharedScans } from './scan';
import type { EmbeddedStore } from './store';
import { WriteBatch } from './write-batch';
import { deleteIn, insertIn, prepareNew, toResult, updateIn, type WriteTarget } from './writes';

export class EmbeddedCollection<T extends { _id: string }> implements Collection<T> {
  readonly name: string;
  private readonly caster: mongoose.Query<any, any>;
  private readonly scans: SharedScans;
  private readonly target: WriteTarget;

  constructor(
    private readonly store: EmbeddedStore,
    private readonly data: CollectionData,
    readonly schema: mongoose.Schema,
    private readonly model: mongoose.Model<any>,
  ) {
    this.name = data.name;
    this.caster = model.find();
    this.scans = new SharedScans(data);
    this.target = { name: this.name, data, model, timestamps: timestampPaths(schema) };
  }

  // ---- reads: never take the lock; they see committed state only ----

  async findOne(filter: Filter, options: FindOptions = {}): Promise<T | null> {
    const [doc] = await this.find(filter, { ...options, limit: 1 });
    return doc ?? null;
  }

  async find(filter: Filter, options: FindOptions = {}): Promise<T[]> {
    this.store.assertUsable();
    const cast = this.castFilter(filter);
    const skip = Math.max(0, options.skip ?? 0);
    const limit = options.limit ? Math.abs(options.limit) : undefined; // 0 means no limit, as in MongoDB
    const sorted = options.sort && Object.keys(options.sort).length > 0;
    const { docs: matched } = await this.scans.scan(cast, true, sorted || limit === undefined ? Infinity : skip + limit);
    const docs = sorted ? sortPage(matched, options.sort!, skip, limit) : matched.slice(skip);
    return this.present(docs, options.projection);
  }

  async countDocuments(filter: Filter): Promise<number> {
    this.store.assertUsable();
    const cast = this.castFilter(filter);
    return (await this.scans.scan(cast, false)).count;
  }

  async aggregate<R = any>(pipeline: Record<string, unknown>[]): Promise<R[]> {
    this.store.assertUsable();
    assertSupportedPipeline(pipeline);
    let rest = pipeline;
    let docs: Iterable<Doc> = this.data.byId.values();
    const first = pipeline[0];
    if (first && '$match' in first) {
      checkFilterPaths(first.$match);
      // like MongoDB's aggregate (and mongoose's), $match is not cast through the schema
      docs = matching(this.data, first.$match as Filter);
      rest = pipeline.slice(1);
    }
    // A $project right after the $match runs before the copy: it builds new documents, so only what
    // it keeps is copied (a report keeps one time of each record, not the whole record).
    if (rest[0] && '$project' in rest[0]) {
      docs = new Aggregator([rest[0]]).run(Array.from(docs)) as Doc[];
      rest = rest.slice(1);
    }
    // stages may return input objects (or parts of them): run on copies
    const inputs = Array.from(docs, (d) => cloneDeep(d));
    return (rest.length ? new Aggregator(rest).run(inputs) : inputs) as R[];
  }

  // ---- writes: validate outside the lock, then one synchronous step against a batch ----

  async insertOne(doc: T, options?: WriteOptions): Promise<void> {
    return this.insertMany([doc], options);
  }

  async insertMany(docs: T[], options?: WriteOptions): Promise<void> {
    await this.guard(async () => {
      const prepared = docs.map((d) => prepareNew(this.target, d));
      if (prepared.length === 0) return;
      await this.store.write(options?.tx, (batch) => {
        for (const doc of prepared) insertIn(this.target, batch, doc);
      });
    });
  }

  async updateOne(filter: Filter, update: Update, options?: UpdateOptions): Promise<UpdateResult> {
    return this.guard(async () => {
      checkUpdatePaths(update);
      const cast = this.castFilter(filter);
      const outcome = await this.store.write(options?.tx, (batch) => updateIn(this.target, batch, cast, update, false, options?.upsert ?? false));
      return toResult(outcome);
    });
  }

  async updateMany(filter: Filter, update: Update, options?: UpdateOptions): Promise<UpdateResult> {
    return this.guard(async () => {
      checkUpdatePaths(update);
      const cast = this.castFilter(filter);
      const outcome = await this.store.write(options?.tx, (batch) => updateIn(this.target, batch, cast, update, true, options?.upsert ?? false));
      return toResult(outcome);
    });
  }

  async findOneAndUpdate(
    filter: Filter,
    update: Update,
    options?: UpdateOptions & { returnDocument?: 'before' | 'after' },
  ): Promise<T | null> {
    return this.guard(async () => {
      checkUpdatePaths(update);
      const cast = this.castFilter(filter);
      const outcome = await this.store.write(options?.tx, (batch) => updateIn(this.target, batch, cast, update, false, options?.upsert ?? false));
      const doc = options?.returnDocument === 'after' ? outcome.after : outcome.before;
      return doc ? (cloneDeep(doc) as unknown as T) : null;
    });
  }

  async deleteOne(filter: Filter, options?: WriteOptions): Promise<number> {
    return this.guard(async () => {
      const cast = this.castFilter(filter);
      return this.store.write(options?.tx, (batch) => deleteIn(this.target, batch, cast, false));
    });
  }

  async deleteMany(filter: Filter, options?: WriteOptions): Promise<number> {
    return this.guard(async () => {
      const cast = this.castFilter(filter);
      return this.store.write(options?.tx, (batch) => deleteIn(this.target, batch, cast, true));
    });
  }

  async bulkWrite(ops: BulkOp[], options?: WriteOptions): Promise<BulkWriteResult> {
    return this.guard(async () => {
      // validate and cast everything first: a bad op fails the call before anything is applied
      const steps = ops.map((op): ((batch: WriteBatch, r: BulkWriteResult) => void) => {
        if ('insertOne' in op) {
          const doc = prepareNew(this.target, op.insertOne.document);
          return (batch, r) => {
            insertIn(this.target, batch, doc);
            r.insertedCount++;
          };
        }
        if ('updateOne' in op || 'updateMany' in op) {
          const multi = 'updateMany' in op;
          const spec = 'updateOne' in op ? op.updateOne : op.updateMany;
          checkUpdatePaths(spec.update);
          const filter = this.castFilter(spec.filter);
          const upsert = 'updateOne' in op ? (op.updateOne.upsert ?? false) : false;
          return (batch, r) => {
            const o = updateIn(this.target, batch, filter, spec.update, multi, upsert);
            r.matchedCount += o.matchedCount;
            r.modifiedCount += o.modifiedCount;
            if (o.upsertedId !== undefined) r.upsertedCount++;
          };
        }
        if ('deleteOne' in op || 'deleteMany' in op) {
          const multi = 'deleteMany' in op;
          const filter = this.castFilter('deleteOne' in op ? op.deleteOne.filter : op.deleteMany.filter);
          return (batch, r) => {
            r.deletedCount += deleteIn(this.target, batch, filter, multi);
          };
        }
        throw new Error(`bulkWrite: unsupported operation ${Object.keys(op as object).join(',')}`);
      });
      return this.store.write(options?.tx, (batch) => {
        const result: BulkWriteResult = { insertedCount: 0, matchedCount: 0, modifiedCount: 0, deletedCount: 0, upsertedCount: 0 };
        for (const step of steps) step(batch, result);
        return result;
      });
    });
  }

  // ---- helpers ----

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
    checkFilterPaths(filter);
    if (!filter || Object.keys(filter).length === 0) return {};
    return this.caster.cast(this.model, cloneQuery(filter)) as Filter;
  }

  private present(docs: Doc[], projection?: Record<string, 0 | 1>): T[] {
    checkPathKeys(projection);
    const copies = docs.map((d) => cloneDeep(d));
    if (!projection || Object.keys(projection).length === 0) return copies as unknown as T[];
    return mingoFind(copies, {}, projection).all() as unknown as T[];
  }
}
