// A small bounded LRU map (Map keeps insertion order: a hit is re-inserted at the end, the oldest
// entry is first). Bounded by entries and by a total weight (e.g. source characters), so a few huge
// values cannot hold memory that many small ones would not.
export class Lru<K, V> {
  private readonly entries = new Map<K, { value: V; weight: number }>();
  private weight = 0;

  constructor(private readonly maxEntries: number, private readonly maxWeight = Number.POSITIVE_INFINITY) {}

  get size(): number {
    return this.entries.size;
  }

  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  set(key: K, value: V, weight = 1): void {
    this.delete(key);
    if (weight > this.maxWeight) return; // larger than the whole cache: not cached at all
    this.entries.set(key, { value, weight });
    this.weight += weight;
    for (const [oldest, entry] of this.entries) {
      if (this.entries.size <= this.maxEntries && this.weight <= this.maxWeight) break;
      this.entries.delete(oldest);
      this.weight -= entry.weight;
    }
  }

  delete(key: K): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.weight -= entry.weight;
  }
}
