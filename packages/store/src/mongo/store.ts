/**
 * The MongoDB adapter: a mongoose connection, models built from the services' schemas, real
 * indexes via `syncIndexes()` at start-up (autoIndex off), transactions via sessions.
 *
 * Parity with the embedded engine is the point, so inserts go through the same
 * `prepareDocument` (cast, defaults, timestamps, validation) and then straight to the driver
 * (no `__v`); updates use mongoose (cast + `runValidators`), reads use lean queries.
 * Known differences: MongoDB validates only the updated paths of an update (embedded re-validates
 * the whole resulting document), and with schema timestamps mongoose bumps `updatedAt` even when
 * nothing else changes.
 */
import { randomUUID } from 'node:crypto';
import mongoose from 'mongoose';
import { DuplicateKeyError, fromMongooseError } from '../errors';
import { assertSupportedPipeline } from '../pipeline';
import { assertStringId, collectionSchema, prepareDocument, sameOptions, timestampPaths, TimestampPaths } from '../schema';
import type {
  BulkOp,
  BulkWriteResult,
  Collection,
  CollectionOptions,
  Filter,
  FindOptions,
  ScanOptions,
  Store,
  Transaction,
  Update,
  UpdateOptions,
  UpdateResult,
  WriteOptions,
} from '../types';
import { equalityScalar } from '../filter';
import { Doc, isPlainObject } from '../values';

class MongoTransaction implements Transaction {
  constructor(
    readonly store: MongoStore,
    readonly session: mongoose.ClientSession,
  ) {}
}

/**
 * Why a MongoDB deployment cannot hold mailer's data, from its `hello` answer, or undefined. Every
 * service writes a record and its outbox fact in one multi-document transaction, which MongoDB runs
 * only on a replica set or through a sharded cluster's mongos: on a standalone server the facts
 * would be published without their records (or the writes fail), so it is refused at start.
 */
export function standaloneProblem(hello: { setName?: unknown; msg?: unknown }): string | undefined {
  if (hello.setName || hello.msg === 'isdbgrid') return undefined;
  return (
    'MONGODB_URI names a standalone MongoDB server, which cannot run the multi-document transactions every service writes in: ' +
    'use a replica set (a single member is enough: start mongod with --replSet rs0, run rs.initiate(), add ?replicaSet=rs0 to the URI) ' +
    'or the mongos routers of a sharded cluster'
  );
}

export class MongoStore implements Store {
  readonly kind = 'mongo' as const;
  private readonly collections = new Map<string, { collection: MongoCollection<any>; options?: CollectionOptions }>();

  /** A replica set or a sharded cluster (open refuses a standalone server): transactions are available. */
  private constructor(readonly connection: mongoose.Connection) {}

  static async open(uri: string): Promise<MongoStore> {
    const connection = mongoose.createConnection(uri, { autoIndex: false, autoCreate: true });
    await connection.asPromise();
    const hello = await connection.db!.admin().command({ hello: 1 });
    const problem = standaloneProblem(hello);
    if (problem) {
      await connection.close();
      throw new Error(problem);
    }
    return new MongoStore(connection);
  }

  collection<T extends { _id: string }>(name: string, schema: mongoose.Schema, options?: CollectionOptions): Collection<T> {
    const existing = this.collections.get(name);
    if (existing) {
      if (existing.collection.schema !== schema) throw new Error(`@mailer/store: collection "${name}" is already open with a different schema`);
      if (!sameOptions(existing.options, options)) throw new Error(`@mailer/store: collection "${name}" is already open with other options`);
      return existing.collection as MongoCollection<T>;
    }
    assertStringId(name, schema);
    // expireAfter becomes a TTL index of the model's schema, created (or changed) by syncIndexes
    const model = this.connection.model(name, collectionSchema(name, schema, options), name);
    const collection = new MongoCollection<T>(this, name, schema, model);
    this.collections.set(name, { collection, options });
    return collection;
  }

  async transaction<R>(fn: (tx: Transaction) => Promise<R>): Promise<R> {
    const session = await this.connection.startSession();
    try {
      let result!: R;
      // withTransaction retries the callback on transient errors: keep it free of side effects other than store writes
      await session.withTransaction(async () => {
        result = await fn(new MongoTransaction(this, session));
      });
      return result;
    } finally {
      await session.endSession();
    }
  }

  /** Runs `fn` in the caller's transaction, else in its own one. */
  async atomically<R>(tx: Transaction | undefined, fn: (session?: mongoose.ClientSession) => Promise<R>): Promise<R> {
    if (tx) return fn(this.sessionOf(tx));
    return this.transaction((own) => fn(this.sessionOf(own)));
  }

  sessionOf(tx: Transaction | undefined): mongoose.ClientSession | undefined {
    if (tx === undefined) return undefined;
    if (!(tx instanceof MongoTransaction) || tx.store !== this) throw new Error('@mailer/store: transaction handle belongs to another store');
    return tx.session;
  }

  async ping(): Promise<boolean> {
    try {
      await this.connection.db!.admin().ping();
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    await this.connection.close();
  }
}

class MongoCollection<T extends { _id: string }> implements Collection<T> {
  private readonly ready: Promise<void>;
  private readonly timestamps: TimestampPaths;
  /** The driver collection, typed for string ids (inserts bypass mongoose: already prepared, and no `__v`). */
  private readonly raw: mongoose.mongo.Collection<Doc>;

  constructor(
    private readonly store: MongoStore,
    readonly name: string,
    readonly schema: mongoose.Schema,
    private readonly model: mongoose.Model<any>,
  ) {
    this.timestamps = timestampPaths(schema);
    this.raw = model.collection as unknown as mongoose.mongo.Collection<Doc>;
    // indexes are created once at start-up, not by autoIndex; every operation waits for it
    this.ready = model.syncIndexes().then(() => undefined);
    this.ready.catch(() => undefined); // reported by the operations that await it
  }

  async findOne(filter: Filter, options: FindOptions = {}): Promise<T | null> {
    await this.ready;
    return (await this.model.findOne(filter, options.projection, { sort: options.sort, skip: options.skip }).lean()) as T | null;
  }

  async find(filter: Filter, options: FindOptions = {}): Promise<T[]> {
    await this.ready;
    return (await this.model.find(filter, options.projection, { sort: options.sort, skip: options.skip, limit: options.limit }).lean()) as unknown as T[];
  }

  async countDocuments(filter: Filter): Promise<number> {
    await this.ready;
    return this.model.countDocuments(filter);
  }

  async aggregate<R = any>(pipeline: Record<string, unknown>[]): Promise<R[]> {
    assertSupportedPipeline(pipeline);
    await this.ready;
    return this.model.aggregate(pipeline as unknown as mongoose.PipelineStage[]).exec();
  }

  scan(filter: Filter, options: ScanOptions = {}): AsyncIterable<T[]> {
    const size = Math.max(1, options.batchSize ?? 500);
    const { model, ready } = this;
    return {
      async *[Symbol.asyncIterator]() {
        await ready;
        let batch: T[] = [];
        // a cursor: the server sends `size` documents per round trip, memory holds one batch
        for await (const doc of model.find(filter, options.projection, { sort: options.sort }).lean().cursor({ batchSize: size })) {
          batch.push(doc as T);
          if (batch.length >= size) {
            yield batch;
            batch = [];
          }
        }
        if (batch.length > 0) yield batch;
      },
    };
  }

  async insertOne(doc: T, options?: WriteOptions): Promise<void> {
    return this.insertMany([doc], options);
  }

  async insertMany(docs: T[], options?: WriteOptions): Promise<void> {
    await this.guard(async () => {
      const prepared = docs.map((d) => prepareDocument(this.model, d as any, { isNew: true, collection: this.name, timestamps: this.timestamps }));
      if (prepared.length === 0) return;
      const run = (session?: mongoose.ClientSession) => this.raw.insertMany(prepared, { session, ordered: true });
      if (prepared.length === 1) await run(this.store.sessionOf(options?.tx));
      else await this.store.atomically(options?.tx, run);
    });
  }

  async updateOne(filter: Filter, update: Update, options?: UpdateOptions): Promise<UpdateResult> {
    return this.guard(() => this.updateWith(this.store.sessionOf(options?.tx), filter, update, false, options?.upsert ?? false));
  }

  async updateMany(filter: Filter, update: Update, options?: UpdateOptions): Promise<UpdateResult> {
    return this.guard(() => this.updateWith(this.store.sessionOf(options?.tx), filter, update, true, options?.upsert ?? false));
  }

  async findOneAndUpdate(
    filter: Filter,
    update: Update,
    options?: UpdateOptions & { returnDocument?: 'before' | 'after' },
  ): Promise<T | null> {
    return this.guard(async () => {
      const upsert = options?.upsert ?? false;
      const doc = await this.model.findOneAndUpdate(filter, withUpsertId(filter, update, upsert), {
        upsert,
        runValidators: true,
        session: this.store.sessionOf(options?.tx),
        returnDocument: options?.returnDocument ?? 'before',
        lean: true,
      });
      return (doc as T | null) ?? null;
    });
  }

  async deleteOne(filter: Filter, options?: WriteOptions): Promise<number> {
    return this.guard(async () => (await this.model.deleteOne(filter, { session: this.store.sessionOf(options?.tx) })).deletedCount);
  }

  async deleteMany(filter: Filter, options?: WriteOptions): Promise<number> {
    return this.guard(async () => (await this.model.deleteMany(filter, { session: this.store.sessionOf(options?.tx) })).deletedCount);
  }

  /**
   * Runs the ops in order through this adapter's own methods, inside one transaction (the
   * caller's, or its own when the server supports it), so validation, upsert ids and error
   * mapping are exactly those of the single-document calls. One round trip per op: correctness
   * first; batch at the driver level if this ever shows in a profile.
   */
  async bulkWrite(ops: BulkOp[], options?: WriteOptions): Promise<BulkWriteResult> {
    return this.guard(() =>
      this.store.atomically(options?.tx, async (session) => {
        const r: BulkWriteResult = { insertedCount: 0, matchedCount: 0, modifiedCount: 0, deletedCount: 0, upsertedCount: 0 };
        for (const op of ops) {
          if ('insertOne' in op) {
            const doc = prepareDocument(this.model, op.insertOne.document, { isNew: true, collection: this.name, timestamps: this.timestamps });
            await this.raw.insertOne(doc, { session });
            r.insertedCount++;
          } else if ('updateOne' in op || 'updateMany' in op) {
            const spec = 'updateOne' in op ? op.updateOne : op.updateMany;
            const upsert = 'updateOne' in op ? (op.updateOne.upsert ?? false) : false;
            const u = await this.updateWith(session, spec.filter, spec.update, 'updateMany' in op, upsert);
            r.matchedCount += u.matchedCount;
            r.modifiedCount += u.modifiedCount;
            if (u.upsertedId !== undefined) r.upsertedCount++;
          } else if ('deleteOne' in op) {
            r.deletedCount += (await this.model.deleteOne(op.deleteOne.filter, { session })).deletedCount;
          } else if ('deleteMany' in op) {
            r.deletedCount += (await this.model.deleteMany(op.deleteMany.filter, { session })).deletedCount;
          } else {
            throw new Error(`bulkWrite: unsupported operation ${Object.keys(op as object).join(',')}`);
          }
        }
        return r;
      }),
    );
  }

  private async updateWith(
    session: mongoose.ClientSession | undefined,
    filter: Filter,
    update: Update,
    multi: boolean,
    upsert: boolean,
  ): Promise<UpdateResult> {
    const options = { upsert, runValidators: true, session };
    const u = withUpsertId(filter, update, upsert);
    const res = multi ? await this.model.updateMany(filter, u, options) : await this.model.updateOne(filter, u, options);
    const result: UpdateResult = { matchedCount: res.matchedCount, modifiedCount: res.modifiedCount };
    if (res.upsertedId !== null && res.upsertedId !== undefined) result.upsertedId = String(res.upsertedId);
    return result;
  }

  private async guard<R>(fn: () => Promise<R>): Promise<R> {
    await this.ready;
    try {
      return await fn();
    } catch (err) {
      throw mapMongoError(err, this.name);
    }
  }
}

/**
 * An upsert whose filter and update name no `_id` would get an ObjectId from the server; give it
 * a UUID instead, as the embedded engine does.
 */
export function withUpsertId(filter: Filter, update: Update, upsert: boolean): Update {
  if (!upsert || equalityScalar(filter._id) !== undefined) return update;
  const hasOperators = Object.keys(update).some((k) => k.startsWith('$'));
  const normalized: Record<string, any> = hasOperators ? { ...update } : { $set: update };
  for (const op of ['$set', '$setOnInsert']) {
    if (isPlainObject(normalized[op]) && '_id' in normalized[op]) return normalized;
  }
  if ('_id' in normalized) return normalized;
  normalized.$setOnInsert = { ...(normalized.$setOnInsert ?? {}), _id: randomUUID() };
  return normalized;
}

/** E11000 (from any driver error shape) -> DuplicateKeyError; mongoose validation/cast -> DocumentValidationError. */
export function mapMongoError(err: unknown, collection: string): unknown {
  const e = err as { code?: number; message?: string; errmsg?: string; keyValue?: Record<string, unknown>; writeErrors?: any[] };
  const first = Array.isArray(e?.writeErrors) ? e.writeErrors[0] : undefined;
  const code = e?.code ?? first?.code ?? first?.err?.code;
  if (code === 11000) {
    const message = String(first?.errmsg ?? first?.err?.errmsg ?? e.errmsg ?? e.message ?? '');
    const index = /index: (\S+)/.exec(message)?.[1] ?? 'unknown';
    const key = e.keyValue ?? first?.err?.keyValue ?? first?.keyValue ?? {};
    return new DuplicateKeyError(collection, index, key);
  }
  return fromMongooseError(err, collection);
}
