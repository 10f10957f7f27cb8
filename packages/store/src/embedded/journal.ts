/**
 * Durable files of the embedded engine, in `dataDir`:
 *
 * - `journal.jsonl`: append-only, one line per committed write or transaction (codec.ts). A write's
 *   promise resolves only after its line was handed to the kernel with write(2), so killing the
 *   process (even with SIGKILL) loses nothing acknowledged; with `fsync: true` the journal is also
 *   fdatasync'ed first, for power loss.
 * - `snapshot.jsonl`: the whole state at the last compaction, in the same line format.
 * - `LOCK`: the pid of the process using the directory (single-process engine).
 *
 * Start-up (load + compaction) uses synchronous I/O on purpose: nothing is being served yet, and
 * it keeps the recovery logic linear and easy to reason about.
 */
import fs from 'node:fs';
import path from 'node:path';
import { decodeRecord, encodeRecord, JournalOp } from '../codec';
import type { CollectionData } from './collection-data';

export const SNAPSHOT_FILE = 'snapshot.jsonl';
export const JOURNAL_FILE = 'journal.jsonl';
export const LOCK_FILE = 'LOCK';

const READ_CHUNK = 8 * 1024 * 1024;
const SNAPSHOT_OPS_PER_LINE = 1000;
const SYNC_WRITE_MAX = 1024 * 1024;

/** Calls `onLine` for every newline-terminated line; returns the file size and the offset after the last newline. */
function readLines(file: string, onLine: (line: string, start: number) => void): { size: number; completeEnd: number } {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { size: 0, completeEnd: 0 };
    throw err;
  }
  try {
    const chunk = Buffer.allocUnsafe(READ_CHUNK);
    let carry: Buffer = Buffer.alloc(0);
    let carryStart = 0; // file offset of carry[0]
    let position = 0;
    for (;;) {
      const n = fs.readSync(fd, chunk, 0, chunk.length, position);
      if (n === 0) break;
      position += n;
      const buf = carry.length ? Buffer.concat([carry, chunk.subarray(0, n)]) : chunk.subarray(0, n);
      let start = 0;
      for (let nl = buf.indexOf(10, start); nl !== -1; nl = buf.indexOf(10, start)) {
        onLine(buf.toString('utf8', start, nl), carryStart + start);
        start = nl + 1;
      }
      carry = Buffer.from(buf.subarray(start)); // copy: `chunk` is reused
      carryStart += start;
    }
    return { size: position, completeEnd: carryStart };
  } finally {
    fs.closeSync(fd);
  }
}

export interface LoadResult {
  snapshotBytes: number;
  journalBytes: number;
  /** Bytes dropped from the journal's end: a record torn by a crash mid-write. */
  tornBytes: number;
}

/**
 * Replays snapshot then journal into `apply`. A torn or unreadable last journal line (crash
 * mid-write) is dropped and truncated away, so later appends never follow garbage; an unreadable
 * line followed by more data is corruption and stops the start-up.
 */
export function loadDataDir(dir: string, apply: (ops: JournalOp[]) => void): LoadResult {
  const snapshotPath = path.join(dir, SNAPSHOT_FILE);
  const snapshot = readLines(snapshotPath, (line, start) => {
    try {
      apply(decodeRecord(line));
    } catch (err) {
      throw new Error(`@mailer/store: snapshot ${snapshotPath} is corrupt at byte ${start}: ${(err as Error).message}`);
    }
  });

  const journalPath = path.join(dir, JOURNAL_FILE);
  let badAt: number | undefined;
  const journal = readLines(journalPath, (line, start) => {
    if (badAt !== undefined) throw new Error(`@mailer/store: journal ${journalPath} is corrupt at byte ${badAt} (unreadable record followed by more records)`);
    let ops: JournalOp[];
    try {
      ops = decodeRecord(line);
    } catch {
      badAt = start;
      return;
    }
    apply(ops);
  });
  const validEnd = badAt ?? journal.completeEnd;
  if (validEnd < journal.size) fs.truncateSync(journalPath, validEnd);
  return { snapshotBytes: snapshot.size, journalBytes: validEnd, tornBytes: journal.size - validEnd };
}

function writeAllSync(fd: number, buf: Buffer): void {
  let off = 0;
  while (off < buf.length) off += fs.writeSync(fd, buf, off, buf.length - off);
}

function fsyncPath(p: string): void {
  const fd = fs.openSync(p, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Compaction: writes the whole state to `snapshot.jsonl.tmp`, fsyncs it, renames it over the
 * snapshot (atomic), fsyncs the directory, and only then empties the journal. A crash at any
 * point leaves either the old snapshot + full journal, or the new snapshot + (part of) a journal
 * whose records are already in it; replaying those again is harmless (whole-document records).
 */
export function compact(dir: string, collections: Iterable<CollectionData>): number {
  const tmp = path.join(dir, SNAPSHOT_FILE + '.tmp');
  const fd = fs.openSync(tmp, 'w');
  let written = 0;
  try {
    let pending: string[] = [];
    let pendingChars = 0;
    const flush = () => {
      if (!pending.length) return;
      const buf = Buffer.from(pending.join(''), 'utf8');
      writeAllSync(fd, buf);
      written += buf.length;
      pending = [];
      pendingChars = 0;
    };
    for (const data of collections) {
      let ops: JournalOp[] = [];
      const emit = () => {
        const line = encodeRecord(ops);
        pending.push(line);
        pendingChars += line.length;
        ops = [];
        if (pendingChars > READ_CHUNK) flush();
      };
      for (const doc of data.byId.values()) {
        ops.push([data.name, doc._id, doc]);
        if (ops.length === SNAPSHOT_OPS_PER_LINE) emit();
      }
      if (ops.length) emit();
    }
    flush();
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, path.join(dir, SNAPSHOT_FILE));
  try {
    fsyncPath(dir); // makes the rename durable; some filesystems cannot fsync a directory
  } catch (err) {
    if (!['EINVAL', 'EISDIR', 'EPERM', 'ENOTSUP'].includes((err as NodeJS.ErrnoException).code ?? '')) throw err;
  }
  const journalPath = path.join(dir, JOURNAL_FILE);
  if (fs.existsSync(journalPath)) {
    fs.truncateSync(journalPath, 0);
    fsyncPath(journalPath);
  }
  return written;
}

/** Removes a half-written snapshot left by a crash during compaction. */
export function removeStaleTemp(dir: string): void {
  fs.rmSync(path.join(dir, SNAPSHOT_FILE + '.tmp'), { force: true });
}

/** Data dirs locked by stores open in this process. */
const lockedHere = new Set<string>();

/**
 * Takes the directory lock. A lock left by a dead process (kill -9) is stale and taken over;
 * a live holder (another process, or another open store in this one) is an error, because two
 * writers would interleave journal records. A lock naming our own pid that no store of ours
 * holds is stale too: a restarted container gets the same pid (often 1) as its predecessor.
 */
export function acquireLock(dir: string): void {
  const lockPath = path.join(dir, LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(lockPath, String(process.pid), { flag: 'wx' });
      lockedHere.add(dir);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = Number(fs.readFileSync(lockPath, 'utf8').trim());
    if (holder === process.pid ? lockedHere.has(dir) : holder && isAlive(holder)) {
      throw new Error(`@mailer/store: data dir ${dir} is in use by process ${holder}${holder === process.pid ? ' (this process: close the other store first)' : ''}`);
    }
    fs.rmSync(lockPath, { force: true });
  }
  throw new Error(`@mailer/store: could not lock data dir ${dir}`);
}

export function releaseLock(dir: string): void {
  lockedHere.delete(dir);
  const lockPath = path.join(dir, LOCK_FILE);
  try {
    if (Number(fs.readFileSync(lockPath, 'utf8').trim()) === process.pid) fs.rmSync(lockPath, { force: true });
  } catch {
    // already gone
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Appends journal records with group commit: every record appended while the event loop is busy
 * (same tick, or while the previous write is in flight) goes out in ONE write(2), and each
 * append's promise resolves once its bytes are written (and fdatasync'ed with `fsync`).
 * Readers are never blocked behind disk I/O: only small page-cache copies happen on the event
 * loop, large writes and every fdatasync run on the thread pool.
 *
 * A failed write (disk full, I/O error) is fatal for the writer: memory already holds the change
 * while the journal may not, so every later append fails and the store reports itself unhealthy
 * until restarted, which replays the journal (fail-stop rather than silently diverging).
 */
export class JournalWriter {
  private pending: string[] = [];
  private waiters: { resolve: () => void; reject: (err: Error) => void }[] = [];
  private flushing = false;
  private scheduled = false;
  private idle: (() => void)[] = [];
  failure?: Error;

  private constructor(
    private readonly handle: fs.promises.FileHandle,
    private readonly fsync: boolean,
    private readonly onFailure: (err: Error) => void,
  ) {}

  static async open(dir: string, fsync: boolean, onFailure: (err: Error) => void): Promise<JournalWriter> {
    const handle = await fs.promises.open(path.join(dir, JOURNAL_FILE), 'a');
    return new JournalWriter(handle, fsync, onFailure);
  }

  append(line: string): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise<void>((resolve, reject) => {
      this.pending.push(line);
      this.waiters.push({ resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.flushing || this.scheduled) return;
    this.scheduled = true;
    // setImmediate, not nextTick: lets every write issued in this tick join the same syscall
    setImmediate(() => void this.flush());
  }

  private async flush(): Promise<void> {
    this.scheduled = false;
    this.flushing = true;
    const lines = this.pending;
    const waiters = this.waiters;
    this.pending = [];
    this.waiters = [];
    try {
      const buf = Buffer.from(lines.length === 1 ? lines[0] : lines.join(''), 'utf8');
      let off = 0;
      if (buf.length <= SYNC_WRITE_MAX) {
        // A small write(2) only copies into the page cache (microseconds); doing it synchronously
        // saves a thread-pool round trip per batch, which is what bounds a writer that awaits
        // each write in turn (~11k -> ~29k inserts/s). Big batches still go asynchronous.
        while (off < buf.length) off += fs.writeSync(this.handle.fd, buf, off, buf.length - off);
      } else {
        while (off < buf.length) off += (await this.handle.write(buf, off, buf.length - off)).bytesWritten;
      }
      if (this.fsync) await this.handle.datasync(); // milliseconds on real disks: never on the event loop
      for (const w of waiters) w.resolve();
    } catch (err) {
      this.failure = err as Error;
      for (const w of [...waiters, ...this.waiters]) w.reject(this.failure);
      this.pending = [];
      this.waiters = [];
      this.onFailure(this.failure);
    } finally {
      this.flushing = false;
      if (this.pending.length) this.schedule();
      else for (const done of this.idle.splice(0)) done();
    }
  }

  /** Resolves when everything appended so far is written. */
  drain(): Promise<void> {
    if (!this.flushing && !this.scheduled && this.pending.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  async close(): Promise<void> {
    await this.drain();
    await this.handle.close();
  }
}
