// A per-key async lock: the contact projection serializes its writes of one account in this process.

/**
 * Serializes async work per key (one account at a time in this process). runAll queues on several
 * keys at once, synchronously: each key's queue keeps call order, so multi-key work cannot deadlock.
 */
export class KeyedLock {
  private tails = new Map<string, Promise<unknown>>();
  run<R>(key: string, fn: () => Promise<R>): Promise<R> {
    return this.runAll([key], fn);
  }
  runAll<R>(keys: Iterable<string>, fn: () => Promise<R>): Promise<R> {
    const unique = [...new Set(keys)];
    const prevs = unique.map((k) => this.tails.get(k)).filter((p) => p !== undefined);
    const next = (prevs.length === 0 ? Promise.resolve() : Promise.all(prevs)).then(fn);
    const tail = next.catch(() => undefined);
    for (const key of unique) this.tails.set(key, tail);
    void tail.then(() => {
      for (const key of unique) if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return next;
  }
}
