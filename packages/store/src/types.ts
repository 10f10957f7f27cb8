import type mongoose from 'mongoose';

/** A MongoDB query document, e.g. `{ accountId, status: { $in: ['active'] } }`. */
export type Filter = Record<string, unknown>;
/** A MongoDB update document (`$set`, `$inc`, ...). A document without operators is treated as `$set`, as mongoose does. */
export type Update = Record<string, unknown>;

export interface FindOptions {
  sort?: Record<string, 1 | -1>;
  skip?: number;
  limit?: number;
  projection?: Record<string, 0 | 1>;
}

export interface ScanOptions {
  sort?: Record<string, 1 | -1>;
  projection?: Record<string, 0 | 1>;
  /** Documents per batch (default 500). */
  batchSize?: number;
}

export interface WriteOptions {
  tx?: Transaction;
}

export interface UpdateOptions extends WriteOptions {
  upsert?: boolean;
}

export interface UpdateResult {
  matchedCount: number;
  modifiedCount: number;
  upsertedId?: string;
}

export type BulkOp<F extends Filter = Filter> =
  | { insertOne: { document: any } }
  | { updateOne: { filter: F; update: Update; upsert?: boolean } }
  | { updateMany: { filter: F; update: Update } }
  | { deleteOne: { filter: F } }
  | { deleteMany: { filter: F } };

export interface BulkWriteResult {
  insertedCount: number;
  matchedCount: number;
  modifiedCount: number;
  deletedCount: number;
  upsertedCount: number;
}

/**
 * The filter of a query on account-owned documents (those with an `accountId`) must name the account:
 * a query that forgets it does not compile. Cross-account queries (due pollers, relays, migrations)
 * say so by going through `acrossAccounts(collection)`.
 */
export type ScopedFilter<T> = T extends { accountId: string } ? Filter & { accountId: string | { $in: readonly string[] } } : Filter;

export type Collection<T extends { _id: string }> = CollectionOf<T, ScopedFilter<T>>;

/** A collection whose filters need not name an account: for the few queries across accounts. */
export type CrossAccountCollection<T extends { _id: string }> = CollectionOf<T, Filter>;

export interface CollectionOf<T extends { _id: string }, F extends Filter> {
  readonly name: string;
  findOne(filter: F, options?: FindOptions): Promise<T | null>;
  find(filter: F, options?: FindOptions): Promise<T[]>;
  countDocuments(filter: F): Promise<number>;
  /** Throws DocumentValidationError (schema) or DuplicateKeyError (unique index); nothing is written then. */
  insertOne(doc: T, options?: WriteOptions): Promise<void>;
  /** All-or-nothing: ordered and atomic on embedded; inside a transaction on mongo (the given one, or its own when the server supports transactions). */
  insertMany(docs: T[], options?: WriteOptions): Promise<void>;
  updateOne(filter: F, update: Update, options?: UpdateOptions): Promise<UpdateResult>;
  updateMany(filter: F, update: Update, options?: UpdateOptions): Promise<UpdateResult>;
  /** Returns the document before the update by default (MongoDB's default), or after with `returnDocument: 'after'`. */
  findOneAndUpdate(
    filter: F,
    update: Update,
    options?: UpdateOptions & { returnDocument?: 'before' | 'after' },
  ): Promise<T | null>;
  deleteOne(filter: F, options?: WriteOptions): Promise<number>;
  deleteMany(filter: F, options?: WriteOptions): Promise<number>;
  /** Ordered; atomic on embedded, and on mongo when transactions are available. */
  bulkWrite(ops: BulkOp<F>[], options?: WriteOptions): Promise<BulkWriteResult>;
  /** Supported stages (checked on both adapters so code cannot depend on one): see SUPPORTED_STAGES. */
  aggregate<R = any>(pipeline: Record<string, unknown>[]): Promise<R[]>;
  /**
   * Every matching document, in batches, for walks over large collections (a backfill, a
   * maintenance pass): memory holds one batch, and the embedded engine gives the event loop turns
   * while it reads. Read the iterable to its end or leave the loop (`break`): the read is held open
   * until then. No snapshot across batches (as a MongoDB cursor).
   */
  scan(filter: F, options?: ScanOptions): AsyncIterable<T[]>;
}

/**
 * Per-collection declarations that are not in the schema (they depend on settings).
 * Opening a collection twice must give the same ones.
 */
export interface CollectionOptions {
  /**
   * Retention: a document is removed once the Date at `path` is more than `days` old (documents
   * without a Date there are kept). MongoDB: a TTL index on `path`; embedded: an index on `path`
   * and a pruner deleting expired documents in batches (every StoreConfig.pruneIntervalMs).
   */
  expireAfter?: { path: string; days: number };
  /**
   * Embedded engine: keeps the number of documents per value of a key, so that a count whose filter
   * is exactly one value of each of the key's paths is read, not counted (a list's total over a
   * million records). A key is one path or several counted together (scalars the schema types):
   * `'accountId'`, or `['accountId', ['accountId', 'status']]`. MongoDB ignores it.
   */
  countBy?: string | ReadonlyArray<string | readonly string[]>;
}

/**
 * Opaque handle passed to writes (`{ tx }`) that must commit together.
 * Reads do not take a transaction: they always see committed state, on both adapters.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-interface
export interface Transaction {}

export interface Store {
  readonly kind: 'embedded' | 'mongo';
  /** Same name twice returns the same collection (the schema must then be the same object, and the options the same). */
  collection<T extends { _id: string }>(name: string, schema: mongoose.Schema, options?: CollectionOptions): Collection<T>;
  /** All writes passing `{ tx }` commit together or not at all. */
  transaction<R>(fn: (tx: Transaction) => Promise<R>): Promise<R>;
  /** For health checks: false once the store is closed or failed. */
  ping(): Promise<boolean>;
  /**
   * Embedded adapter: commits and documents written (inserted, replaced, deleted) since the store
   * opened, the write amplification of a use case (exported as metrics; benchmarks divide them by
   * their units). Absent on mongo.
   */
  stats?(): StoreStats;
  close(): Promise<void>;
}

export interface StoreStats {
  commits: number;
  documentWrites: number;
}

export interface StoreConfig {
  /** When set, the mongo adapter is used; otherwise the embedded one. */
  mongodbUri?: string;
  /** Embedded adapter: directory holding the SQLite database (created if missing). */
  dataDir: string;
  /** Embedded adapter: sync the WAL at every commit (`synchronous=FULL`: survives power loss, not only process death). Default false (`NORMAL`). */
  fsync?: boolean;
  /** Embedded adapter: how often expired documents are pruned (CollectionOptions.expireAfter), ms. Default 60,000 (MongoDB's TTL monitor runs every 60 s). */
  pruneIntervalMs?: number;
  /** Embedded adapter: where one-off events are told (the import of an older engine's files). Default: a JSON line on stderr. */
  log?: (message: string, fields: Record<string, unknown>) => void;
}

/** An account-owned document's filter, built piece by piece: it starts with the account. */
export type AccountFilter = Filter & { accountId: string };

/**
 * The one way to query account-owned documents without naming an account: due pollers, relays,
 * migrations and projections that work across accounts say so here.
 */
export function acrossAccounts<T extends { _id: string }>(collection: Collection<T>): CrossAccountCollection<T> {
  return collection as unknown as CrossAccountCollection<T>;
}
