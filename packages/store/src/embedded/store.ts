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
import fs from 'node:fs';
import path from 'node:path';
import mongoose from 'mongoose';
import { encodeRecord, JournalOp } from '../codec';
import { assertStringId, uniqueIndexSpecs } from '../schema';
import type { Collection, Store, StoreConfig, Transaction } from '../types';
import { CollectionData } from './collection-data';
import { EmbeddedCollection } from './collection';
import { acquireLock, compact, JournalWriter, loadDataDir, releaseLock, removeStaleTemp } from './journal';
import { Mutex } from './mutex';
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
