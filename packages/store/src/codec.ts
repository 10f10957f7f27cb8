/**
 * Journal and snapshot line format (pure). One line = one atomic record = a JSON array of
 * operations `[collection, _id, document | null]` (null deletes). Records carry whole documents,
 * never update operators, so replay is deterministic and idempotent: re-applying any prefix of
 * the journal on top of a snapshot that already contains it converges to the same state, which is
 * what makes compaction crash-safe without sequence numbers.
 *
 * JSON loses Dates, ObjectIds (mongoose gives array subdocuments ObjectId `_id`s by default) and
 * Buffers, so they are tagged as `{"$date": ms}` / `{"$oid": hex}` / `{"$binary": base64}`;
 * MongoDB field names cannot start with `$`, so the tags cannot collide with data.
 */
import { Types } from 'mongoose';
import { Doc, isObjectId } from './values';

export type JournalOp = [collection: string, id: string, doc: Doc | null];

function replacer(this: any, key: string, value: unknown): unknown {
  const raw = this[key];
  if (raw instanceof Date) return { $date: raw.getTime() };
  if (isObjectId(raw)) return { $oid: raw.toHexString() };
  if (Buffer.isBuffer(raw)) return { $binary: raw.toString('base64') };
  return value;
}

function reviver(_key: string, value: any): unknown {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    if (value.$date !== undefined) return new Date(value.$date);
    if (value.$oid !== undefined) return new Types.ObjectId(value.$oid as string);
    if (value.$binary !== undefined) return Buffer.from(value.$binary as string, 'base64');
  }
  return value;
}

export function encodeRecord(ops: JournalOp[]): string {
  return JSON.stringify(ops, replacer) + '\n';
}

/** Throws on a malformed line (the caller decides whether that is a torn tail or corruption). */
export function decodeRecord(line: string): JournalOp[] {
  // The reviver costs ~2x parse time; skip it for lines that cannot contain tags.
  const tagged = line.includes('"$date"') || line.includes('"$oid"') || line.includes('"$binary"');
  const ops = tagged ? JSON.parse(line, reviver) : JSON.parse(line);
  if (!Array.isArray(ops)) throw new Error('journal record is not an array');
  for (const op of ops) {
    if (!Array.isArray(op) || typeof op[0] !== 'string' || typeof op[1] !== 'string') {
      throw new Error('malformed journal operation');
    }
  }
  return ops as JournalOp[];
}
