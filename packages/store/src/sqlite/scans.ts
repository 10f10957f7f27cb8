/**
 * Long reads of the embedded engine without holding the event loop. node:sqlite is synchronous: a
 * statement that steps through a million rows would stop every other request of the process until
 * it is done. A read that may step through many rows (a count or find that tests rows in JavaScript,
 * an unbounded find, a scan, an aggregation) therefore iterates its statement in slices of about
 * SLICE_MS and gives the event loop a turn between slices, so other requests are answered meanwhile.
 *
 * A statement paused between slices keeps its read transaction (its snapshot) open, and every other
 * statement of its connection would read that same snapshot: the reader would stop seeing new
 * commits. So a sliced read runs on a connection of its own, taken from a small pool (SCAN_CONNECTIONS,
 * opened on first use; more concurrent long reads wait for one). Each sees the committed state of its
 * start, as MongoDB's cursors read without a snapshot guarantee across batches but never see an
 * uncommitted write.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { SQLInputValue } from 'node:sqlite';
import { Connection } from './connection';
import type { RowQuery } from './table';

/** How long a sliced read steps before the event loop gets a turn. */
export const SLICE_MS = 8;
/** Connections for sliced reads (each holds at most one read at a time). */
const SCAN_CONNECTIONS = 4;
/** Rows between two looks at the clock. */
const CHECK_EVERY = 64;
/** Table rows a counted chunk (countInChunks) starts with, and the most it grows to. */
const FIRST_CHUNK = 256;
const MAX_CHUNK = 1 << 14;

export type Row = Record<string, unknown>;

/**
 * A count in chunks of table rows in rid order (table.ts tableWalk), each one statement returning
 * how many rows it read, how many match and the last rid: `sql` takes `params`, then the rid to
 * start after and the chunk's number of rows.
 */
export interface ChunkedCount {
  sql: string;
  params: (string | number)[];
}

export class ScanPool {
  private readonly idle: Connection[] = [];
  private readonly waiting: Array<{ resolve(c: Connection): void; reject(err: Error): void }> = [];
  private open = 0;
  private active = 0;
  private closing = false;
  private drained?: () => void;

  constructor(private readonly file: string) {}

  /**
   * Steps through the rows of `sql` on a connection of its own, calling `onRow` for each (return
   * false to stop early), with a turn of the event loop every SLICE_MS.
   */
  async iterate(sql: string, params: SQLInputValue[], onRow: (row: Row) => boolean | void): Promise<void> {
    const db = await this.acquire();
    let rows: IterableIterator<Row> | undefined;
    try {
      rows = db.prepare(sql).iterate(...params) as IterableIterator<Row>;
      let sliceEnd = performance.now() + SLICE_MS;
      let n = 0;
      for (;;) {
        const next = rows.next();
        if (next.done) return;
        if (onRow(next.value) === false) return;
        if (++n % CHECK_EVERY === 0 && performance.now() > sliceEnd) {
          await nextTurn();
          if (this.closing) throw closed();
          sliceEnd = performance.now() + SLICE_MS;
        }
      }
    } finally {
      rows?.return?.(); // resets the statement: its read transaction ends
      this.release(db);
    }
  }

  /**
   * A count in chunks of table rows (ChunkedCount), each chunk one synchronous statement
   * sized to take about SLICE_MS, with a turn of the event loop between them. The chunks run in one
   * read transaction, so they count one committed state, as a single statement would.
   */
  async countInChunks(count: ChunkedCount): Promise<number> {
    const db = await this.acquire();
    try {
      const statement = db.prepare(count.sql);
      db.exec('BEGIN');
      let after = Number.MIN_SAFE_INTEGER;
      let size = FIRST_CHUNK;
      let n = 0;
      for (;;) {
        const started = performance.now();
        const chunk = statement.get(...count.params, after, size) as { rows: number; n: number; last: number | null };
        n += chunk.n;
        if (chunk.rows < size) return n;
        after = chunk.last!;
        const ms = performance.now() - started;
        // toward SLICE_MS, at most doubling: rows further on may cost more than these did
        size = Math.min(MAX_CHUNK, 2 * size, Math.max(FIRST_CHUNK, Math.round((size * SLICE_MS) / Math.max(ms, 0.1))));
        await nextTurn();
        if (this.closing) throw closed();
      }
    } finally {
      if (db.inTransaction) db.exec('COMMIT');
      this.release(db);
    }
  }

  /** Runs a planned read in slices (see iterate). */
  async run<R>(query: RowQuery<R>): Promise<R> {
    const c = query.collector();
    await this.iterate(query.sql, query.params, (row) => c.onRow(row));
    return c.result();
  }

  /**
   * The rows of `sql`, each mapped (undefined: left out), in batches of `size` (a scan): between two
   * batches the consumer may do what it likes; the statement (and its connection) is held until the
   * generator is finished or left.
   */
  async *batches<T>(sql: string, params: SQLInputValue[], size: number, map: (row: Row) => T | undefined): AsyncGenerator<T[]> {
    const db = await this.acquire();
    let rows: IterableIterator<Row> | undefined;
    try {
      rows = db.prepare(sql).iterate(...params) as IterableIterator<Row>;
      let batch: T[] = [];
      let sliceEnd = performance.now() + SLICE_MS;
      let n = 0;
      for (;;) {
        const next = rows.next();
        if (next.done) break;
        const item = map(next.value);
        if (item !== undefined) batch.push(item);
        if (batch.length >= size) {
          // a yield is no turn of the event loop (the consumer resumes us in a microtask), and the
          // consumer's work between batches counts in the slice
          yield batch;
          batch = [];
          if (this.closing) throw closed();
        }
        if (++n % CHECK_EVERY === 0 && performance.now() > sliceEnd) {
          await nextTurn();
          if (this.closing) throw closed();
          sliceEnd = performance.now() + SLICE_MS;
        }
      }
      if (batch.length > 0) yield batch;
    } finally {
      rows?.return?.();
      this.release(db);
    }
  }

  /** Stops new reads, waits for running ones to reach their next slice, closes the connections. */
  async close(): Promise<void> {
    this.closing = true;
    for (const w of this.waiting.splice(0)) {
      this.active--;
      w.reject(closed());
    }
    if (this.active > 0) await new Promise<void>((resolve) => (this.drained = resolve));
    for (const c of this.idle.splice(0)) c.close();
    this.open = 0;
  }

  private async acquire(): Promise<Connection> {
    if (this.closing) throw closed();
    this.active++;
    const idle = this.idle.pop();
    if (idle) return idle;
    if (this.open < SCAN_CONNECTIONS) {
      this.open++;
      try {
        // a small page cache each: these connections read mostly once
        return new Connection(this.file, ['busy_timeout = 5000', 'cache_size = -4000', 'query_only = 1']);
      } catch (err) {
        this.open--;
        this.active--;
        throw err;
      }
    }
    return new Promise<Connection>((resolve, reject) => this.waiting.push({ resolve, reject }));
  }

  private release(db: Connection): void {
    if (this.closing) {
      db.close();
      if (--this.active === 0) this.drained?.();
      return;
    }
    this.active--; // the waiter handed the connection counted itself when it asked
    const next = this.waiting.shift();
    if (next) return next.resolve(db);
    this.idle.push(db);
  }
}

const closed = () => new Error('@mailer/store: store is closed');
