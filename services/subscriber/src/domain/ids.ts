import { invalid, notFound } from '@mailer/kit';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A UUID from a request, lowercased (ids are stored lowercase); malformed -> invalid_uuid. */
export function parseId(raw: string | undefined | null, path: string): string {
  const id = (raw ?? '').toLowerCase();
  if (!UUID.test(id)) {
    throw invalid('invalid_uuid', `${path} must be a UUID, got "${String(raw ?? '').slice(0, 60)}"`, [{ path, problem: 'not a UUID' }]);
  }
  return id;
}

/**
 * An array of ids from a request: every entry a UUID (invalid_uuid), at most `max`
 * (validation_failed), no entry twice (duplicate_ids). Returns them lowercased, in request order.
 */
export function parseIdList(raw: readonly string[], path: string, max: number, opts: { min?: number } = {}): string[] {
  if (raw.length > max) {
    throw invalid('validation_failed', `${path} holds ${raw.length} ids; at most ${max} are allowed`, [{ path, problem: `more than ${max} entries` }]);
  }
  if (raw.length < (opts.min ?? 0)) {
    throw invalid('validation_failed', `${path} must hold at least ${opts.min} id(s)`, [{ path, problem: `fewer than ${opts.min} entries` }]);
  }
  const ids = raw.map((r, i) => parseId(r, `${path}[${i}]`));
  assertNoDuplicates(ids, path);
  return ids;
}

export function assertNoDuplicates(ids: readonly string[], path: string): void {
  const seen = new Set<string>();
  for (let i = 0; i < ids.length; i++) {
    if (seen.has(ids[i])) {
      throw invalid('duplicate_ids', `${path} holds ${ids[i]} more than once`, [{ path: `${path}[${i}]`, problem: 'duplicate id' }]);
    }
    seen.add(ids[i]);
  }
}

/** Every id must name an existing item of the account (ids of other accounts are unknown too). */
export function assertAllKnown(ids: readonly string[], known: (id: string) => boolean, errorId: string, what: string): void {
  for (const id of ids) if (!known(id)) throw notFound(errorId, `${what} ${id} does not exist`);
}

export function sortedIds(ids: Iterable<string>): string[] {
  return [...ids].sort();
}
