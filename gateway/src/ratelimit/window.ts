import type { Outcome } from './decide';

/**
 * Sliding window with per-slot counters: "at most `count` requests in any span of `windowMs`".
 * Time is cut into slots of `slotMs`; the state counts the admitted requests of every slot that
 * still intersects the window. A request is admitted when the requests of all slots intersecting
 * [now - windowMs, now], plus itself, stay within `count`. Those slots cover every span of
 * `windowMs` ending now, so no such span ever holds more than `count` admitted requests (checked
 * when its last request was admitted). The oldest slot may partly lie before the window: its
 * requests are counted up to `slotMs` too long, which only refuses early at the window's edge (by
 * at most one slot), never admits more.
 *
 * Stored compactly, as it is written on every batch: the index of the oldest counted slot and the
 * counts from there on (at most windowMs / slotMs + 1 numbers).
 */
export interface WindowLimit {
  kind: 'window';
  /** Stable name, the member of the stored state (e.g. "minute"). */
  name: string;
  /** Requests admitted in any span of `windowMs`. */
  count: number;
  windowMs: number;
  /** Counter granularity; `windowMs` must be a multiple. Refusals come at most this much early. */
  slotMs: number;
}

/** `s`: index (epoch ms / slotMs) of the slot counted in `c[0]`; `c[i]`: requests admitted in slot s + i. */
export interface SlotCounts {
  s: number;
  c: number[];
}

function isSlotCounts(v: unknown): v is SlotCounts {
  return typeof v === 'object' && v !== null && Number.isInteger((v as SlotCounts).s) && Array.isArray((v as SlotCounts).c);
}

/** The stored counts without the slots that no longer intersect the window (nor leading empty ones). */
function live(limit: WindowLimit, stored: unknown, now: number): SlotCounts {
  if (!isSlotCounts(stored)) return { s: Math.floor(now / limit.slotMs), c: [] };
  const oldest = Math.floor((now - limit.windowMs) / limit.slotMs);
  let drop = Math.max(0, oldest - stored.s);
  while (drop < stored.c.length && !(stored.c[drop] > 0)) drop++;
  if (drop >= stored.c.length) return { s: Math.floor(now / limit.slotMs), c: [] };
  return { s: stored.s + drop, c: stored.c.slice(drop) };
}

/** When slot `index` stops intersecting the window [now - windowMs, now]. */
const leavesAt = (limit: WindowLimit, index: number) => (index + 1) * limit.slotMs + limit.windowMs;

export function windowOutcome(limit: WindowLimit, stored: unknown, now: number): Outcome {
  const counts = live(limit, stored, now);
  const used = counts.c.reduce((sum, n) => sum + n, 0);
  if (used + 1 > limit.count) {
    // Admitted again once enough of the oldest slots have left the window.
    let freed = 0;
    let i = 0;
    while (i < counts.c.length - 1 && used - (freed + counts.c[i]) + 1 > limit.count) freed += counts.c[i++];
    return { allowed: false, remaining: 0, resetMs: leavesAt(limit, counts.s + i) - now };
  }
  // A clock behind the stored slots (another replica's) counts the request in the oldest stored
  // slot at the latest: it stays counted at least as long as it should.
  const slot = Math.max(Math.floor(now / limit.slotMs), counts.s);
  const c = counts.c.slice();
  while (c.length <= slot - counts.s) c.push(0);
  c[slot - counts.s]++;
  // Reset: until the oldest counted requests leave the window (with nothing remaining, that is
  // when the next request is admitted again).
  return { allowed: true, next: { s: counts.s, c }, remaining: limit.count - used - 1, resetMs: leavesAt(limit, counts.s) - now };
}
