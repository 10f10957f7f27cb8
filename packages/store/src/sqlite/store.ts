/**
 * The embedded adapter: SQLite on disk (node:sqlite, built into Node 24), one database file per
 * service in its data directory (`store.sqlite`, WAL mode), for a single machine without MongoDB.
 *
 * Two connections to the one file:
 * - the writer runs every write inside a SQLite transaction. A `store.transaction()` holds it
 *   (BEGIN IMMEDIATE ... COMMIT) across its callback's awaits; writes without `{ tx }` queue and are
 *   committed together at the next turn of the event loop (group commit), each inside a savepoint
 *   so that one failing write undoes only itself. A write resolves after its COMMIT.
 * - the reader serves every read. In WAL mode it sees the last committed state, never the writes of
 *   a transaction still open on the writer: a transaction is invisible until it commits.
 * Statements are synchronous: each read or write step runs to completion in one go, so pages and
 * write batches are kept bounded.
 *
 * Durability: a COMMIT has written the WAL before it returns, so `kill -9` loses nothing acknowledged;
 * `fsync: true` (STORE_FSYNC) sets `synchronous=FULL`, which also syncs the WAL at every commit
 * (power loss); otherwise `synchronous=NORMAL` (the WAL is synced at checkpoints).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import fs from 'node:fs';
import path from 'node:path';
import mongoose from 'mongoose';
import { assertStringId, collectionSchema, sameOptions } from '../schema';
import type { Collection, CollectionOptions, Store, StoreConfig, StoreStats, Transaction } from '../types';
import { SqliteCollection } from './collection';
import { Connection } from './connection';
import { importLegacy } from './legacy';
import { acquireLock, releaseLock } from './lock';
import { Mutex } from './mutex';
import { ScanPool } from './scans';
import { Table } from './table';

export const DATABASE_FILE = 'store.sqlite';
/** Expired documents deleted per write (a pruning round is many of them, each a group commit of its own). */
const PRUNE_BATCH = 500;
/** How often the planner's statistics are checked (refreshStatistics); also at every open. */
const REFRESH_STATISTICS_EVERY_MS = 3_600_000;

class SqliteTransaction implements Transaction {
  active = true;
  /** The first failed write: like MongoDB, which aborts a transaction on a write error, it can no longer commit. */
  failure?: unknown;

  constructor(readonly store: SqliteStore) {}
}

interface QueuedWrite {
  table: Table;
  op: (db: Connection) => unknown;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

export class SqliteStore implements Store {
  readonly kind = 'embedded' as const;
  /** @internal Connections for reads that step through many rows (scans.ts). */
  readonly scans: ScanPool;
  private readonly collections = new Map<string, { collection: SqliteCollection<any>; options?: CollectionOptions }>();
  private readonly pruneTimer: NodeJS.Timeout;
  private readonly statisticsTimer: NodeJS.Timeout;
  private pruning?: Promise<number>;
  private readonly writeLock = new Mutex();
  private readonly currentTx = new AsyncLocalStorage<SqliteTransaction>();
  // A private mongoose instance, never connected: models on it only cast and validate.
  private readonly mongoose = new mongoose.Mongoose({ autoIndex: false, autoCreate: false, bufferCommands: false });
  private queue: QueuedWrite[] = [];
  /** Tables created inside the writer's open transaction: not there any more if it rolls back. */
  private created: Table[] = [];
  private flushScheduled = false;
  private closed = false;
  private commits = 0;

  private constructor(
    readonly dir: string,
    private readonly writer: Connection,
    private readonly readerConnection: Connection,
    pruneIntervalMs: number,
  ) {
    this.scans = new ScanPool(path.join(dir, DATABASE_FILE));
    this.pruneTimer = setInterval(() => void this.prune().catch(() => undefined), pruneIntervalMs);
    this.pruneTimer.unref();
    this.statisticsTimer = setInterval(() => this.refreshStatistics(), REFRESH_STATISTICS_EVERY_MS);
    this.statisticsTimer.unref();
  }

  static async open(config: StoreConfig): Promise<SqliteStore> {
    const dir = path.resolve(config.dataDir);
    fs.mkdirSync(dir, { recursive: true });
    acquireLock(dir);
    const opened: Connection[] = [];
    try {
      const file = path.join(dir, DATABASE_FILE);
      const common = ['busy_timeout = 5000', 'cache_size = -16000'];
      // analysis_limit: `PRAGMA optimize` (at open, hourly, at close) samples indexes instead of reading them whole
      const writer = new Connection(file, ['journal_mode = WAL', `synchronous = ${config.fsync ? 'FULL' : 'NORMAL'}`, 'journal_size_limit = 67108864', 'analysis_limit = 1000', ...common]);
      opened.push(writer);
      writer.exec(`CREATE TABLE IF NOT EXISTS _store_meta (key TEXT PRIMARY KEY, value TEXT)`);
      const log = config.log ?? ((message, fields) => console.error(JSON.stringify({ msg: `@mailer/store: ${message}`, ...fields })));
      importLegacy(dir, writer, log);
      analyzeStale(writer); // before the reader opens: a connection loads the statistics as it opens
      const reader = new Connection(file, [...common, 'query_only = 1']);
      opened.push(reader);
      return new SqliteStore(dir, writer, reader, config.pruneIntervalMs ?? 60_000);
    } catch (err) {
      for (const c of opened) c.close();
      releaseLock(dir);
      throw err;
    }
  }

  collection<T extends { _id: string }>(name: string, schema: mongoose.Schema, options?: CollectionOptions): Collection<T> {
    this.assertUsable();
    const existing = this.collections.get(name);
    if (existing) {
      if (existing.collection.schema !== schema) throw new Error(`@mailer/store: collection "${name}" is already open with a different schema`);
      if (!sameOptions(existing.options, options)) throw new Error(`@mailer/store: collection "${name}" is already open with other options`);
      return existing.collection as SqliteCollection<T>;
    }
    if (name.startsWith('_store_') || name.startsWith('sqlite_')) throw new Error(`@mailer/store: collection name "${name}" is reserved`);
    assertStringId(name, schema);
    const table = new Table(name, collectionSchema(name, schema, options), options);
    // a collection first opened while a transaction holds the writer gets its table with its first write
    if (!this.writer.inTransaction) table.sync(this.writer);
    const model = this.mongoose.model(name, schema, name);
    const collection = new SqliteCollection<T>(this, table, schema, model);
    this.collections.set(name, { collection, options });
    return collection;
  }

  /**
   * @internal Deletes the documents past their collection's retention (CollectionOptions.expireAfter),
   * in batches of PRUNE_BATCH, each its own write (the event loop turns between them); the number
   * deleted. Runs every `pruneIntervalMs`; one round at a time.
   */
  prune(): Promise<number> {
    this.pruning ??= this.pruneRound().finally(() => (this.pruning = undefined));
    return this.pruning;
  }

  private async pruneRound(): Promise<number> {
    let total = 0;
    for (const { collection } of [...this.collections.values()]) {
      const table = collection.table;
      if (!table.expiry) continue;
      for (;;) {
        const now = Date.now();
        const deleted = await this.write(undefined, table, (db) => table.deleteExpired(db, now, PRUNE_BATCH));
        total += deleted;
        if (deleted < PRUNE_BATCH) break;
      }
    }
    return total;
  }

  /**
   * @internal Refreshes stale planner statistics (hourly; tests call it), unless a transaction holds
   * the writer (then at the next round). Other connections keep the statistics they loaded, and their
   * prepared statements the plans made with them, until the schema changes: an empty schema change
   * makes them reload both.
   */
  refreshStatistics(): void {
    if (this.closed || !this.writeLock.tryLock()) return;
    try {
      if (analyzeStale(this.writer)) this.writer.exec('BEGIN IMMEDIATE; CREATE TABLE _store_replan (x); DROP TABLE _store_replan; COMMIT');
    } catch {
      if (this.writer.inTransaction) this.writer.exec('ROLLBACK');
      // statistics are an optimisation
    } finally {
      this.writeLock.unlock();
      this.scheduleFlush();
    }
  }

  async transaction<R>(fn: (tx: Transaction) => Promise<R>): Promise<R> {
    this.assertUsable();
    this.assertNotInTransaction();
    // One turn of the event loop first, as every plain write waits for its group commit: statements
    // are synchronous, so a loop of transactions would otherwise never let I/O and timers run.
    await new Promise((resolve) => setImmediate(resolve));
    await this.writeLock.lock();
    const tx = new SqliteTransaction(this);
    try {
      this.assertUsable();
      this.runQueue(); // writes issued before the transaction are committed before it, in call order
      this.writer.exec('BEGIN IMMEDIATE');
      const result = await this.currentTx.run(tx, () => fn(tx));
      if (tx.failure !== undefined) throw tx.failure;
      this.writer.exec('COMMIT');
      this.commits++;
      this.created = [];
      return result;
    } finally {
      tx.active = false;
      if (this.writer.inTransaction) this.rollback();
      this.writeLock.unlock();
      this.scheduleFlush();
    }
  }

  async ping(): Promise<boolean> {
    return !this.closed;
  }

  stats(): StoreStats {
    // total_changes(): rows inserted, updated or deleted on the writer, side tables' rows included
    const documentWrites = this.closed ? 0 : (this.writer.prepare('SELECT total_changes() AS n').get() as { n: number }).n;
    return { commits: this.commits, documentWrites };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    clearInterval(this.pruneTimer);
    clearInterval(this.statisticsTimer);
    await this.scans.close(); // long reads stop at their next slice
    await this.writeLock.lock(); // a running transaction finishes first
    try {
      if (this.closed) return;
      this.runQueue();
      this.closed = true;
      try {
        this.writer.exec('PRAGMA optimize'); // keeps the planner's statistics current, cheaply
      } catch {
        // statistics are an optimisation
      }
      this.readerConnection.close();
      this.writer.close();
    } finally {
      this.writeLock.unlock();
      releaseLock(this.dir);
    }
  }

  /**
   * @internal The connection reads of `table` use (committed state only), or undefined when the
   * table does not exist yet (its collection was opened during a transaction and never written).
   */
  reader(table: Table): Connection | undefined {
    this.assertUsable();
    if (!table.ready) {
      if (!this.writer.inTransaction) table.sync(this.writer);
      else if (!this.readerConnection.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).get(table.name)) return undefined;
    }
    return this.readerConnection;
  }

  /** @internal A pragma of the writer connection (tests: `synchronous`, `journal_mode`). */
  pragma(name: string): unknown {
    return this.writer.pragma(name);
  }

  /**
   * @internal Runs a synchronous write step on the writer: at once inside the caller's transaction
   * (`tx`), else at the next group commit. Resolves with the step's result once committed.
   */
  write<R>(tx: Transaction | undefined, table: Table, op: (db: Connection) => R): Promise<R> {
    this.assertUsable();
    if (tx !== undefined) {
      if (!(tx instanceof SqliteTransaction) || tx.store !== this) throw new Error('@mailer/store: transaction handle belongs to another store');
      if (!tx.active) throw new Error('@mailer/store: transaction is no longer active');
      if (tx.failure !== undefined) throw new Error(`@mailer/store: transaction aborted by an earlier failed write: ${(tx.failure as Error)?.message}`);
      try {
        this.ensureTable(table);
        return Promise.resolve(op(this.writer));
      } catch (err) {
        tx.failure = err;
        throw err;
      }
    }
    this.assertNotInTransaction();
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ table, op, resolve: resolve as (v: unknown) => void, reject });
      this.scheduleFlush();
    });
  }

  private scheduleFlush(): void {
    if (this.flushScheduled || this.queue.length === 0) return;
    this.flushScheduled = true;
    // setImmediate: every write issued in this turn of the event loop joins the same commit
    setImmediate(() => {
      this.flushScheduled = false;
      if (!this.writeLock.tryLock()) return; // a transaction holds the writer: flushed when it ends
      try {
        this.runQueue();
      } finally {
        this.writeLock.unlock();
        this.scheduleFlush();
      }
    });
  }

  /** Commits the queued writes in one transaction, each in its own savepoint. Needs the write lock. */
  private runQueue(): void {
    const batch = this.queue;
    if (batch.length === 0) return;
    this.queue = [];
    const outcomes: { ok: boolean; value: unknown }[] = [];
    const db = this.writer;
    try {
      db.exec('BEGIN IMMEDIATE');
      for (const write of batch) {
        try {
          this.ensureTable(write.table); // outside the savepoint: the table stays for the next writes
        } catch (err) {
          outcomes.push({ ok: false, value: err });
          continue;
        }
        db.exec('SAVEPOINT w');
        try {
          outcomes.push({ ok: true, value: write.op(db) });
          db.exec('RELEASE w');
        } catch (err) {
          db.exec('ROLLBACK TO w');
          db.exec('RELEASE w');
          outcomes.push({ ok: false, value: err });
        }
      }
      db.exec('COMMIT');
      this.commits++;
      this.created = [];
    } catch (err) {
      // the commit itself failed (disk full, I/O error): nothing of the batch is written
      if (db.inTransaction) this.rollback();
      batch.forEach((w) => w.reject(err));
      return;
    }
    batch.forEach((w, i) => (outcomes[i].ok ? w.resolve(outcomes[i].value) : w.reject(outcomes[i].value)));
  }

  /** Creates the table of a collection opened while the writer was busy (see collection()). */
  private ensureTable(table: Table): void {
    if (table.ready) return;
    table.sync(this.writer);
    this.created.push(table);
  }

  private rollback(): void {
    this.writer.exec('ROLLBACK');
    for (const table of this.created) table.ready = false;
    this.created = [];
  }

  private assertUsable(): void {
    if (this.closed) throw new Error('@mailer/store: store is closed');
  }

  private assertNotInTransaction(): void {
    if (this.currentTx.getStore()?.active) {
      throw new Error('@mailer/store: inside store.transaction(), pass { tx } to every write (a write outside the transaction would wait for it forever)');
    }
  }
}

/**
 * Re-analyzes every table whose size changed 25-fold since its statistics were taken (0x10000: all
 * tables, not only those this connection queried, which for the writer are few), sampling within the
 * connection's analysis_limit: milliseconds. Statistics taken while a collection was small make SQLite
 * prefer scanning and sorting a whole account to walking an index once it is large. True when any
 * statistics changed.
 */
function analyzeStale(db: Connection): boolean {
  const statistics = () => {
    try {
      return (db.prepare(`SELECT group_concat(tbl || ' ' || idx || ' ' || stat, ';') AS s FROM sqlite_stat1`).get() as { s: string | null }).s;
    } catch {
      return null; // no statistics yet
    }
  };
  const before = statistics();
  db.exec('PRAGMA optimize = 0x10002');
  return statistics() !== before;
}
