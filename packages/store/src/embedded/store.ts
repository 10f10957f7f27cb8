/**
 * The embedded adapter: a single-process MongoDB-like store for laptops, demos and CI.
 *
 * Concurrency model (why it is safe without locks on reads):
 * - Node runs our code on one thread, so a synchronous block is atomic. Every write computes its
 *   changes into a WriteBatch (invisible to readers) and the store then commits the batch in one
 *   synchronous step: memory is updated and ONE journal record is queued together. Readers
 *   therefore see either none or all of a write, transaction, insertMany or bulkWrite.
 * - Writes are serialized by a mutex. A plain write holds it only for its synchronous part (so
 *   concurrent writes still share one journal syscall: group commit); a transaction holds it from
 *   start to commit, because its callback awaits in between and other writers must not change what
 *   it has read and checked (unique keys). A write without `{ tx }` issued from inside a
 *   transaction's callback would wait for that transaction forever, so it is rejected with an error
 *   instead (detected with AsyncLocalStorage).
 * - A write resolves once its journal record is written. Readers may see a committed change a
 *   moment before it is on disk; it is only acknowledged to the writer after. If the journal write
 *   fails, the store fails stop (see JournalWriter).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Aggregator, find as mingoFind } from 'mingo';
import mongoose from 'mongoose';
import { encodeRecord, JournalOp } from '../codec';
import { fromMongooseError } from '../errors';
import { compileFilter, compileFilters, upsertSeed } from '../filter';
import { assertSupportedPipeline } from '../pipeline';
import { assertStringId, prepareDocument, timestampPaths, TimestampPaths, uniqueIndexSpecs } from '../schema';
import { sortPage } from '../sort';
import type {
  BulkOp,
  BulkWriteResult,
  Collection,
  Filter,
  FindOptions,
  Store,
  StoreConfig,
  Transaction,
  Update,
  UpdateOptions,
  UpdateResult,
  WriteOptions,
} from '../types';
import { applyUpdate, normalizeUpdate } from '../update';
import { cloneDeep, cloneQuery, deepEqual, Doc, isObjectId, setPath } from '../values';
import { CollectionData } from './collection-data';
import { acquireLock, compact, JournalWriter, loadDataDir, releaseLock, removeStaleTemp } from './journal';
import { Mutex } from './mutex';
import { planCandidates } from './plan';
import { WriteBatch } from './write-batch';

const DEFAULT_COMPACT_BYTES = 64 * 1024 * 1024;

class EmbeddedTransaction implements Transaction {
  readonly batch = new WriteBatch();
  active = true;
  /** The first failed write: like MongoDB, which aborts a transaction on a write error, it can no longer commit. */
  failure?: unknown;

  constructor(readonly store: EmbeddedStore) {}
}

export class EmbeddedStore implements Store {
  readonly kind = 'embedded' as const;
  private readonly data = new Map<string, CollectionData>();
  private readonly collections = new Map<string, EmbeddedCollection<any>>();
  private readonly writeLock = new Mutex();
  private readonly currentTx = new AsyncLocalStorage<EmbeddedTransaction>();
  // A private mongoose instance, never connected: models on it only cast and validate.
  private readonly mongoose = new mongoose.Mongoose({ autoIndex: false, autoCreate: false, bufferCommands: false });
  private journal!: JournalWriter;
  private closed = false;
  private failure?: Error;

  private constructor(readonly dir: string) {}

  static async open(config: StoreConfig): Promise<EmbeddedStore> {
    const dir = path.resolve(config.dataDir);
    fs.mkdirSync(dir, { recursive: true });
    acquireLock(dir);
    try {
      const store = new EmbeddedStore(dir);
      removeStaleTemp(dir);
      const loaded = loadDataDir(dir, (ops) => store.replay(ops));
      const threshold = config.compactThresholdBytes ?? DEFAULT_COMPACT_BYTES;
      // compact only when replaying the journal costs more than rewriting the snapshot would
      if (loaded.journalBytes > 0 && loaded.journalBytes >= Math.max(threshold, loaded.snapshotBytes / 2)) {
        compact(dir, store.data.values());
      }
      store.journal = await JournalWriter.open(dir, config.fsync ?? false, (err) => (store.failure = err));
      return store;
    } catch (err) {
      releaseLock(dir);
      throw err;
    }
  }

  private dataFor(name: string): CollectionData {
    let data = this.data.get(name);
    if (!data) this.data.set(name, (data = new CollectionData(name)));
    return data;
  }

  private replay(ops: JournalOp[]): void {
    for (const [name, id, doc] of ops) this.dataFor(name).setDocument(id, doc);
  }

  collection<T extends { _id: string }>(name: string, schema: mongoose.Schema): Collection<T> {
    this.assertUsable();
    const existing = this.collections.get(name);
    if (existing) {
      if (existing.schema !== schema) throw new Error(`@mailer/store: collection "${name}" is already open with a different schema`);
      return existing as EmbeddedCollection<T>;
    }
    assertStringId(name, schema);
    const data = this.dataFor(name);
    data.defineUniqueIndexes(uniqueIndexSpecs(schema));
    const model = this.mongoose.model(name, schema, name);
    const collection = new EmbeddedCollection<T>(this, data, schema, model);
    this.collections.set(name, collection);
    return collection;
  }

  async transaction<R>(fn: (tx: Transaction) => Promise<R>): Promise<R> {
    this.assertUsable();
    this.assertNotInTransaction();
    await this.writeLock.lock();
    const tx = new EmbeddedTransaction(this);
    let result!: R;
    let durable!: Promise<void>;
    try {
      this.assertUsable();
      result = await this.currentTx.run(tx, () => fn(tx));
      if (tx.failure !== undefined) throw tx.failure;
      durable = this.commit(tx.batch);
    } finally {
      tx.active = false;
      this.writeLock.unlock();
    }
    await durable;
    return result;
  }

  async ping(): Promise<boolean> {
    return !this.closed && !this.failure;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.writeLock.lock(); // a running transaction finishes first
    try {
      if (this.closed) return;
      this.closed = true;
      await this.journal.close();
    } finally {
      this.writeLock.unlock();
      releaseLock(this.dir);
    }
  }

  /** @internal */
  assertUsable(): void {
    if (this.closed) throw new Error('@mailer/store: store is closed');
    if (this.failure) throw new Error(`@mailer/store: store failed (journal write error: ${this.failure.message}); restart the process`);
  }

  private assertNotInTransaction(): void {
    if (this.currentTx.getStore()?.active) {
      throw new Error('@mailer/store: inside store.transaction(), pass { tx } to every write (a write outside the transaction would wait for it forever)');
    }
  }

  /**
   * @internal Runs a synchronous write against a batch: the transaction's own when `tx` is given
   * (committed later, with the transaction), else a fresh one committed right away.
   */
  async write<R>(tx: Transaction | undefined, op: (batch: WriteBatch) => R): Promise<R> {
    this.assertUsable();
    if (tx !== undefined) {
      if (!(tx instanceof EmbeddedTransaction) || tx.store !== this) throw new Error('@mailer/store: transaction handle belongs to another store');
      if (!tx.active) throw new Error('@mailer/store: transaction is no longer active');
      if (tx.failure !== undefined) throw new Error(`@mailer/store: transaction aborted by an earlier failed write: ${(tx.failure as Error)?.message}`);
      try {
        return op(tx.batch);
      } catch (err) {
        tx.failure = err;
        throw err;
      }
    }
    this.assertNotInTransaction();
    await this.writeLock.lock();
    let result!: R;
    let durable!: Promise<void>;
    try {
      this.assertUsable();
      const batch = new WriteBatch();
      result = op(batch);
      durable = this.commit(batch);
    } finally {
      this.writeLock.unlock();
    }
    await durable;
    return result;
  }

  /** Applies a batch to memory and queues its single journal record, in one synchronous step. */
  private commit(batch: WriteBatch): Promise<void> {
    if (batch.isEmpty) return Promise.resolve();
    const ops: JournalOp[] = [];
    for (const [data, changes] of batch.changes) for (const [id, doc] of changes) ops.push([data.name, id, doc]);
    // encode before touching memory: a value the journal cannot hold fails the write cleanly
    const line = encodeRecord(ops);
    // unique indexes in two phases, so keys moving between documents never collide transiently
    for (const [data, changes] of batch.changes) {
      for (const id of changes.keys()) {
        const old = data.byId.get(id);
        if (old) data.unindexUnique(old);
      }
    }
    for (const [data, changes] of batch.changes) {
      for (const [id, doc] of changes) {
        data.setDocument(id, doc);
        if (doc) data.indexUnique(doc);
      }
    }
    return this.journal.append(line);
  }
}

interface UpdateOutcome extends UpdateResult {
  before?: Doc;
  after?: Doc;
}

class EmbeddedCollection<T extends { _id: string }> implements Collection<T> {
  readonly name: string;
  private readonly pendingScans = new Map<string, { filter: Filter; jobs: ScanJob[] }>();
  private readonly caster: mongoose.Query<any, any>;
  private readonly timestamps: TimestampPaths;

  constructor(
    private readonly store: EmbeddedStore,
    private readonly data: CollectionData,
    readonly schema: mongoose.Schema,
    private readonly model: mongoose.Model<any>,
  ) {
    this.name = data.name;
    this.caster = model.find();
    this.timestamps = timestampPaths(schema);
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
    const { docs: matched } = await this.scan(cast, true, sorted || limit === undefined ? Infinity : skip + limit);
    const docs = sorted ? sortPage(matched, options.sort!, skip, limit) : matched.slice(skip);
    return this.present(docs, options.projection);
  }

  async countDocuments(filter: Filter): Promise<number> {
    this.store.assertUsable();
    const cast = this.castFilter(filter);
    return (await this.scan(cast, false)).count;
  }

  /**
   * Shared scans: reads issued in the same tick (a segment preview's counts and first page, sent
   * together with Promise.all) over the same candidates (one account's partition) are answered by ONE
   * pass over the documents, each document tested by every read's predicate while it is in the CPU
   * cache (and once per distinct filter: a count and a page of the same filter share the test). Over
   * a million contacts with their orders the pass is bound by memory, not by the tests, so four
   * reads in one pass cost little more than one. Each read still sees the committed state of one
   * instant (the pass is synchronous), as it would alone; reads by _id or unique key run at once.
   */
  private scan(filter: Filter, collect: boolean, max = Infinity): Promise<ScanResult> {
    const plan = planCandidates(this.data, filter);
    if (!collect && plan.exactCount !== undefined) return Promise.resolve({ count: plan.exactCount, docs: [] });
    const predicate = compileFilter(filter); // compile errors belong to this read alone
    const job: ScanJob = { filter, filterKey: filterKey(filter), predicate, collect, max, count: 0, docs: [], resolve: () => {}, reject: () => {} };
    const done = new Promise<ScanResult>((resolve, reject) => {
      job.resolve = resolve;
      job.reject = reject;
    });
    if (plan.scanKey === undefined) {
      runScan(plan.sources, [job]);
      return done;
    }
    let pending = this.pendingScans.get(plan.scanKey);
    if (!pending) {
      const key = plan.scanKey;
      const jobs: ScanJob[] = [];
      pending = { filter, jobs };
      this.pendingScans.set(key, pending);
      queueMicrotask(() => {
        this.pendingScans.delete(key);
        // planned again now: the candidates as committed when the pass runs
        runScan(planCandidates(this.data, filter).sources, jobs);
      });
    }
    pending.jobs.push(job);
    return done;
  }

  async aggregate<R = any>(pipeline: Record<string, unknown>[]): Promise<R[]> {
    this.store.assertUsable();
    assertSupportedPipeline(pipeline);
    let rest = pipeline;
    let docs: Iterable<Doc> = this.data.byId.values();
    const first = pipeline[0];
    if (first && '$match' in first) {
      // like MongoDB's aggregate (and mongoose's), $match is not cast through the schema
      docs = this.matching(first.$match as Filter);
      rest = pipeline.slice(1);
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
      const prepared = docs.map((d) => this.prepareNew(d));
      if (prepared.length === 0) return;
      await this.store.write(options?.tx, (batch) => {
        for (const doc of prepared) this.insertIn(batch, doc);
      });
    });
  }

  async updateOne(filter: Filter, update: Update, options?: UpdateOptions): Promise<UpdateResult> {
    return this.guard(async () => {
      const cast = this.castFilter(filter);
      const outcome = await this.store.write(options?.tx, (batch) => this.updateIn(batch, cast, update, false, options?.upsert ?? false));
      return toResult(outcome);
    });
  }

  async updateMany(filter: Filter, update: Update, options?: UpdateOptions): Promise<UpdateResult> {
    return this.guard(async () => {
      const cast = this.castFilter(filter);
      const outcome = await this.store.write(options?.tx, (batch) => this.updateIn(batch, cast, update, true, options?.upsert ?? false));
      return toResult(outcome);
    });
  }

  async findOneAndUpdate(
    filter: Filter,
    update: Update,
    options?: UpdateOptions & { returnDocument?: 'before' | 'after' },
  ): Promise<T | null> {
    return this.guard(async () => {
      const cast = this.castFilter(filter);
      const outcome = await this.store.write(options?.tx, (batch) => this.updateIn(batch, cast, update, false, options?.upsert ?? false));
      const doc = options?.returnDocument === 'after' ? outcome.after : outcome.before;
      return doc ? (cloneDeep(doc) as unknown as T) : null;
    });
  }

  async deleteOne(filter: Filter, options?: WriteOptions): Promise<number> {
    return this.guard(async () => {
      const cast = this.castFilter(filter);
      return this.store.write(options?.tx, (batch) => this.deleteIn(batch, cast, false));
    });
  }

  async deleteMany(filter: Filter, options?: WriteOptions): Promise<number> {
    return this.guard(async () => {
      const cast = this.castFilter(filter);
      return this.store.write(options?.tx, (batch) => this.deleteIn(batch, cast, true));
    });
  }

  async bulkWrite(ops: BulkOp[], options?: WriteOptions): Promise<BulkWriteResult> {
    return this.guard(async () => {
      // validate and cast everything first: a bad op fails the call before anything is applied
      const steps = ops.map((op): ((batch: WriteBatch, r: BulkWriteResult) => void) => {
        if ('insertOne' in op) {
          const doc = this.prepareNew(op.insertOne.document);
          return (batch, r) => {
            this.insertIn(batch, doc);
            r.insertedCount++;
          };
        }
        if ('updateOne' in op || 'updateMany' in op) {
          const multi = 'updateMany' in op;
          const spec = 'updateOne' in op ? op.updateOne : op.updateMany;
          const filter = this.castFilter(spec.filter);
          const upsert = 'updateOne' in op ? (op.updateOne.upsert ?? false) : false;
          return (batch, r) => {
            const o = this.updateIn(batch, filter, spec.update, multi, upsert);
            r.matchedCount += o.matchedCount;
            r.modifiedCount += o.modifiedCount;
            if (o.upsertedId !== undefined) r.upsertedCount++;
          };
        }
        if ('deleteOne' in op || 'deleteMany' in op) {
          const multi = 'deleteMany' in op;
          const filter = this.castFilter('deleteOne' in op ? op.deleteOne.filter : op.deleteMany.filter);
          return (batch, r) => {
            r.deletedCount += this.deleteIn(batch, filter, multi);
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
    if (!filter || Object.keys(filter).length === 0) return {};
    return this.caster.cast(this.model, cloneQuery(filter)) as Filter;
  }

  /**
   * Committed documents matching a filter (or with `batch`, as that batch sees them), in natural
   * order, stopping after `max`. A plain loop into an array: generators cost more per document
   * than the fast predicates themselves.
   */
  private matching(filter: Filter, batch?: WriteBatch, max = Infinity): Doc[] {
    const out: Doc[] = [];
    if (max <= 0) return out;
    const plan = planCandidates(this.data, filter);
    const predicate = compileFilter(filter);
    const sources = batch ? [batch.candidates(this.data, plan.sources)] : plan.sources;
    for (const source of sources) {
      for (const doc of source) {
        if (predicate(doc)) {
          out.push(doc);
          if (out.length >= max) return out;
        }
      }
    }
    return out;
  }

  private present(docs: Doc[], projection?: Record<string, 0 | 1>): T[] {
    const copies = docs.map((d) => cloneDeep(d));
    if (!projection || Object.keys(projection).length === 0) return copies as unknown as T[];
    return mingoFind(copies, {}, projection).all() as unknown as T[];
  }

  private prepareNew(doc: unknown): Doc {
    if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw new TypeError(`${this.name}: a document must be an object`);
    return prepareDocument(this.model, doc as Record<string, unknown>, { isNew: true, collection: this.name, timestamps: this.timestamps });
  }

  private insertIn(batch: WriteBatch, doc: Doc): void {
    batch.checkUnique(this.data, doc, true);
    batch.set(this.data, doc._id, doc);
  }

  private updateIn(batch: WriteBatch, filter: Filter, update: Update, multi: boolean, upsert: boolean): UpdateOutcome {
    // collect first, then write: an updated document must not be matched again (and iteration must not see our own changes)
    const targets = this.matching(filter, batch, multi ? Infinity : 1);
    if (targets.length === 0) return upsert ? this.upsertIn(batch, filter, update) : { matchedCount: 0, modifiedCount: 0 };

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
        const cast = prepareDocument(this.model, updated, { isNew: false, collection: this.name });
        if (!deepEqual(cast, current)) next = cast;
      }
      if (next !== current) {
        const updatedAt = this.timestamps.updatedAt;
        if (updatedAt && !setsPath(update, updatedAt)) setPath(next, updatedAt, now);
        batch.checkUnique(this.data, next, false);
        batch.set(this.data, next._id, next);
        modifiedCount++;
      }
      before ??= current;
      after ??= next;
    }
    return { matchedCount: targets.length, modifiedCount, before, after };
  }

  private upsertIn(batch: WriteBatch, filter: Filter, update: Update): UpdateOutcome {
    const seeded = applyUpdate(upsertSeed(filter), update, undefined, true);
    // callers generate ids; an upsert that names none gets a UUID (never an ObjectId), on both adapters
    if (seeded._id === undefined || seeded._id === null) seeded._id = randomUUID();
    const doc = prepareDocument(this.model, seeded, { isNew: true, collection: this.name, timestamps: this.timestamps });
    this.insertIn(batch, doc);
    return { matchedCount: 0, modifiedCount: 0, upsertedId: doc._id, after: doc };
  }

  private deleteIn(batch: WriteBatch, filter: Filter, multi: boolean): number {
    const targets = this.matching(filter, batch, multi ? Infinity : 1);
    for (const doc of targets) batch.set(this.data, doc._id, null);
    return targets.length;
  }
}

interface ScanResult {
  count: number;
  docs: Doc[];
}

interface ScanJob extends ScanResult {
  /** The cast filter (compiled again together with the pass's other filters, see runScan). */
  filter: Filter;
  filterKey: string;
  predicate: (doc: Doc) => boolean;
  collect: boolean;
  max: number;
  resolve(result: ScanResult): void;
  reject(err: unknown): void;
}

/** A canonical key of a (cast) filter: reads with equal keys test each document once. */
function filterKey(filter: Filter): string {
  return JSON.stringify(filter, function (this: any, key: string, value: unknown) {
    const raw = this[key];
    if (raw instanceof Date) return { '\u0000date': raw.getTime() };
    if (raw instanceof RegExp) return { '\u0000regex': String(raw) };
    if (isObjectId(raw)) return { '\u0000oid': raw.toHexString() };
    return value;
  });
}

/** One synchronous pass over `sources` answering every job (see EmbeddedCollection.scan). */
function runScan(sources: Iterable<Doc>[], jobs: ScanJob[]): void {
  const groups = new Map<string, { filter: Filter; predicate: (doc: Doc) => boolean; jobs: ScanJob[]; open: boolean; error?: unknown }>();
  for (const job of jobs) {
    const g = groups.get(job.filterKey);
    if (g) g.jobs.push(job);
    else groups.set(job.filterKey, { filter: job.filter, predicate: job.predicate, jobs: [job], open: true });
  }
  const list = [...groups.values()];
  let open = list.length;
  // Several filters: compiled together, so what they have in common (a preview's TRUE filter inside
  // its UNKNOWN and reachable ones, its purchase tests inside the FALSE filter) is tested once per
  // document (compileFilters). Each job's own predicate already compiled: this cannot fail, but if
  // it did the pass would simply test each filter on its own.
  let reset = () => {};
  if (list.length > 1) {
    try {
      const shared = compileFilters(list.map((g) => g.filter));
      list.forEach((g, i) => (g.predicate = shared.predicates[i]));
      reset = shared.reset;
    } catch {
      // keep the separate predicates
    }
  }
  try {
    outer: for (const source of sources) {
      for (const doc of source) {
        for (let i = 0; i < list.length; i++) {
          const g = list[i];
          if (!g.open) continue;
          let hit: boolean;
          try {
            hit = g.predicate(doc);
          } catch (err) {
            g.error = err;
            g.open = false;
            if (--open === 0) break outer;
            continue;
          }
          if (!hit) continue;
          let full = true;
          for (const job of g.jobs) {
            if (!job.collect) {
              job.count++;
              full = false;
            } else if (job.docs.length < job.max) {
              job.docs.push(doc);
              job.count++;
              if (job.docs.length < job.max) full = false;
            }
          }
          // every read of this filter has what it asked for (a page without sort)
          if (full) {
            g.open = false;
            if (--open === 0) break outer;
          }
        }
      }
    }
  } catch (err) {
    for (const job of jobs) job.reject(err); // a source failed: nothing is answered
    return;
  } finally {
    reset(); // the memos must not keep the last document alive
  }
  for (const g of list) for (const job of g.jobs) (g.error === undefined ? job.resolve(job) : job.reject(g.error));
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
