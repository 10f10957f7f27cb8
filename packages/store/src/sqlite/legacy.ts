/**
 * Import of a data directory written by the previous embedded engine, which kept every document in
 * memory and persisted it as `snapshot.jsonl` (the state at its last compaction) followed by
 * `journal.jsonl` (one line per committed write: whole documents, `null` for a deletion; codec.ts).
 * Replaying both in order gives the final state. At the first start on such a directory the store
 * replays them into its tables in one SQLite transaction, records that it did, and renames the files
 * to `*.imported` (kept for the operator to delete). A crash before the commit imports again from
 * scratch; after it, the marker prevents a second import.
 *
 * Like the old engine, a torn last journal line (a crash mid-write) is ignored, and an unreadable
 * line followed by more lines is corruption that stops the start.
 */
import fs from 'node:fs';
import path from 'node:path';
import { decodeRecord, encodeDocument, JournalOp } from '../codec';
import type { Connection } from './connection';
import { KeyColumns } from './keys';
import { ident } from './paths';
import { Table } from './table';

export const LEGACY_FILES = ['snapshot.jsonl', 'journal.jsonl'];
const MARKER = 'legacy-import';
const READ_CHUNK = 8 * 1024 * 1024;

/** Calls `onLine` for every newline-terminated line with its byte offset; a last line without newline is torn and skipped. */
function readLines(file: string, onLine: (line: string, start: number) => void): void {
  const fd = fs.openSync(file, 'r');
  try {
    const chunk = Buffer.allocUnsafe(READ_CHUNK);
    let carry: Buffer = Buffer.alloc(0);
    let carryStart = 0;
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
      carry = Buffer.from(buf.subarray(start)); // a copy: `chunk` is reused
      carryStart += start;
    }
  } finally {
    fs.closeSync(fd);
  }
}

/** Imports the legacy files of `dir` once; returns the documents per collection (empty when there was nothing to do). */
export function importLegacy(dir: string, db: Connection, log: (message: string, fields: Record<string, unknown>) => void): Map<string, number> {
  const files = LEGACY_FILES.map((f) => path.join(dir, f)).filter((f) => fs.existsSync(f));
  const done = new Map<string, number>();
  if (files.length === 0 || db.prepare(`SELECT 1 FROM _store_meta WHERE key = ?`).get(MARKER)) return done;
  const started = Date.now();
  // per collection: its upsert, which fills the key columns of a table a store already created
  // (with its kept counts' triggers reading them); a new table has none yet (filled at open, keys.ts)
  const upserts = new Map<string, string>();
  const apply = (ops: JournalOp[]) => {
    for (const [collection, id, doc] of ops) {
      let upsert = upserts.get(collection);
      if (upsert === undefined) {
        db.exec(Table.createSql(collection));
        const keys = KeyColumns.ofTable(db, collection);
        upsert = `${keys.insertSql()} ON CONFLICT (_id) DO UPDATE SET ${['doc', ...keys.list.map((c) => c.sql)].map((c) => `${c} = excluded.${c}`).join(', ')}`;
        upserts.set(collection, upsert);
      }
      if (doc) db.prepare(upsert).run(id, encodeDocument(doc));
      else db.prepare(`DELETE FROM ${ident(collection)} WHERE _id = ?`).run(id);
    }
  };
  db.exec('BEGIN IMMEDIATE');
  try {
    for (const file of files) {
      let badAt: number | undefined;
      readLines(file, (line, start) => {
        if (badAt !== undefined) throw new Error(`@mailer/store: ${file} is corrupt at byte ${badAt} (unreadable record followed by more records)`);
        let ops: JournalOp[];
        try {
          ops = decodeRecord(line);
        } catch {
          badAt = start; // the last line may be torn by a crash; anything after it is corruption
          return;
        }
        apply(ops);
      });
    }
    db.prepare(`INSERT INTO _store_meta (key, value) VALUES (?, ?)`).run(MARKER, new Date().toISOString());
    db.exec('COMMIT');
  } catch (err) {
    if (db.inTransaction) db.exec('ROLLBACK');
    throw err;
  }
  for (const collection of upserts.keys()) {
    const n = (db.prepare(`SELECT count(*) AS n FROM ${ident(collection)}`).get() as { n: number }).n;
    done.set(collection, n);
    log('imported a collection from the previous engine\'s data files', { collection, documents: n, ms: Date.now() - started });
  }
  for (const file of files) fs.renameSync(file, `${file}.imported`);
  return done;
}
