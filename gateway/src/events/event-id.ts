import { createHash, randomUUID } from 'node:crypto';

/** Namespace of custom-event ids (a fixed random UUID; changing it would change every derived id). */
export const EVENT_ID_NAMESPACE = '5d0c3f5e-8f3a-4d53-9b4a-6c1e2f7a9b10';

/** RFC 9562 UUID version 5 (SHA-1, name-based): the same namespace and name always give the same id. */
export function uuidV5(name: string, namespace: string): string {
  const ns = Buffer.from(namespace.replace(/-/g, ''), 'hex');
  if (ns.length !== 16) throw new Error('namespace must be a UUID');
  const hash = createHash('sha1').update(ns).update(name, 'utf8').digest();
  const bytes = hash.subarray(0, 16);
  bytes[6] = (bytes[6] & 0x0f) | 0x50;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * The id of a custom event. With an idempotencyKey it is derived from (account, key), so every
 * retry carries the same id and doubles as the JetStream msgID; without one it is random (v4).
 */
export function eventIdFor(accountId: string, idempotencyKey: string | undefined): string {
  return idempotencyKey === undefined ? randomUUID() : uuidV5(`${accountId}\n${idempotencyKey}`, EVENT_ID_NAMESPACE);
}
