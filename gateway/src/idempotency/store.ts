import { createHash } from 'node:crypto';
import { sealer, type Sealer } from '@mailer/tokens';
import { KvConflict, type JsonKv } from '../kv/json-kv';

/**
 * Idempotency records (Idempotency-Key on POST), one KV entry per account and key, shared by every
 * replica; the bucket's TTL (24 h) ends them. A record is first "in flight" under a lease: if its
 * owner dies, the lease runs out and the next attempt takes the request over instead of being
 * blocked forever.
 *
 * The stored response is sealed (AES-256-GCM, the record key as associated data): some answers carry
 * a secret (a webhook subscription's signing secret on create and rotate-secret) that must not rest
 * in the bucket in clear for 24 h. Sealing every answer, rather than re-reading the secret at replay,
 * keeps a replay the very answer the client missed, even after a later rotation. A previous master
 * key (API_KEY_MASTER_KEY_PREVIOUS) must be kept 24 h for the records it sealed to replay.
 */

export interface StoredResponse {
  status: number;
  body: unknown;
  headers: Record<string, string>;
}

export type IdempotencyRecord =
  | { state: 'in_flight'; fingerprint: string; leaseUntil: number }
  // `response` in clear: a record written before answers were sealed (gone 24 h after the upgrade).
  | { state: 'complete'; fingerprint: string; sealed: string; response?: undefined }
  | { state: 'complete'; fingerprint: string; response: StoredResponse; sealed?: undefined };

export type BeginResult =
  | { kind: 'started'; revision: number }
  | { kind: 'replay'; response: StoredResponse }
  | { kind: 'mismatch' }
  | { kind: 'in_progress' };

export const IDEMPOTENCY_KEY_SHAPE = /^[\x21-\x7e](?:[\x20-\x7e]{0,253}[\x21-\x7e])?$/;

/** 1-255 printable ASCII characters, not starting or ending with a space. */
export function isValidIdempotencyKey(value: string): boolean {
  return IDEMPOTENCY_KEY_SHAPE.test(value);
}

/** Stable JSON: object members sorted, so `{"a":1,"b":2}` and `{"b":2,"a":1}` are the same request. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.keys(value as object)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** What "the same request" means: method, path and body. */
export function requestFingerprint(method: string, path: string, body: unknown): string {
  return createHash('sha256').update(`${method.toUpperCase()} ${path}\n${canonicalJson(body)}`).digest('hex');
}

export function idempotencyRecordKey(accountId: string, idempotencyKey: string): string {
  // The client's key may hold characters KV keys cannot; its hash cannot.
  return `${accountId}.${createHash('sha256').update(idempotencyKey).digest('hex')}`;
}

/** The keyring that seals stored responses, from API_KEY_MASTER_KEY and its previous values. */
export const responseKeyring = (masterKey: Buffer, previous: readonly Buffer[] = []): Sealer => sealer([masterKey, ...previous], 'idempotency-response');

export class IdempotencyStore {
  constructor(
    private readonly kv: JsonKv,
    /** Seals stored responses (a key derived from API_KEY_MASTER_KEY and its previous values). */
    private readonly sealing: Sealer,
    private readonly leaseMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  async begin(recordKey: string, fingerprint: string): Promise<BeginResult> {
    const inFlight = (): IdempotencyRecord => ({ state: 'in_flight', fingerprint, leaseUntil: this.now() + this.leaseMs });
    for (let attempt = 0; attempt < 10; attempt++) {
      try {
        return { kind: 'started', revision: await this.kv.create(recordKey, inFlight()) };
      } catch (err) {
        if (!(err instanceof KvConflict)) throw err;
      }
      const existing = await this.kv.get<IdempotencyRecord>(recordKey);
      if (!existing) continue; // expired or abandoned in between: try to create again
      const record = existing.value;
      if (record.fingerprint !== fingerprint) return { kind: 'mismatch' };
      if (record.state === 'complete') return { kind: 'replay', response: record.response ?? (JSON.parse(this.sealing.open(record.sealed, recordKey)) as StoredResponse) };
      if (record.leaseUntil > this.now()) return { kind: 'in_progress' };
      // The owner's lease ran out (it crashed or hung): take the request over.
      try {
        return { kind: 'started', revision: await this.kv.update(recordKey, inFlight(), existing.revision) };
      } catch (err) {
        if (!(err instanceof KvConflict)) throw err;
      }
    }
    return { kind: 'in_progress' };
  }

  /** Stores the response for replays. Returns false when another attempt took the record over. */
  async complete(recordKey: string, revision: number, fingerprint: string, response: StoredResponse): Promise<boolean> {
    try {
      const sealed = this.sealing.seal(JSON.stringify(response), recordKey);
      await this.kv.update(recordKey, { state: 'complete', fingerprint, sealed } satisfies IdempotencyRecord, revision);
      return true;
    } catch (err) {
      if (err instanceof KvConflict) return false;
      throw err;
    }
  }

  /** Forgets an attempt that must not be replayed (5xx, no response), so the client can retry. */
  async abandon(recordKey: string, revision: number): Promise<void> {
    try {
      await this.kv.delete(recordKey, revision);
    } catch (err) {
      if (!(err instanceof KvConflict)) throw err;
    }
  }
}
