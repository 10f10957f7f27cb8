// The embedded engine applies everyday updates directly instead of through mingo's (slow to set
// up) updater; this checks the direct path against mingo on random documents and updates.
import { update as mingoUpdate } from 'mingo';
import { applyDirect, applyUpdate } from '../src/update';
import { cloneDeep } from '../src/values';

function rng(seed: number) {
  return () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
}

test('direct update path agrees with mingo on 10,000 random updates', () => {
  const rand = rng(7);
  const pick = <T>(xs: T[]): T => xs[Math.floor(rand() * xs.length)];
  const scalars: unknown[] = [0, 1, 2.5, -3, 'a', 'b', '', true, null, new Date(1000)];
  const value = (): unknown => {
    const r = rand();
    if (r < 0.6) return pick(scalars);
    if (r < 0.8) return [pick(scalars), pick(scalars)];
    return { x: pick(scalars), y: [pick(scalars)] };
  };
  const fields = ['a', 'b', 'tags', 'n', 'o.x', 'o.y', 'o.z.w', 'arr.0', 'p.q'];
  const docOf = (): Record<string, any> => {
    const d: Record<string, any> = { _id: 'id' };
    if (rand() < 0.8) d.a = value();
    if (rand() < 0.8) d.tags = pick([[], ['a'], ['a', 'b', 'a'], [1, 'a', null], 'notarray']);
    if (rand() < 0.8) d.n = pick([1, 5.5, 'str', null]);
    if (rand() < 0.8) d.o = pick([{ x: 1 }, { x: 1, y: [1, 2] }, { z: { w: 1 } }, 'scalar', null, []]);
    if (rand() < 0.5) d.arr = [{ v: 1 }, { v: 2 }];
    return d;
  };
  const operand = (op: string): unknown => {
    switch (op) {
      case '$inc':
        return pick([1, -2, 0.5, 'x']);
      case '$push':
        return rand() < 0.3 ? { $each: [pick(scalars), pick(scalars)] } : value();
      case '$addToSet': {
        // distinct $each values: on a missing field mingo keeps duplicates, MongoDB (and the direct path) does not
        const a = pick(scalars);
        const b = pick(scalars.filter((x) => JSON.stringify(x) !== JSON.stringify(a)));
        return rand() < 0.3 ? { $each: [a, b] } : value();
      }
      case '$pull':
        return rand() < 0.8 ? pick(scalars) : { $in: ['a', 1] };
      case '$unset':
        return '';
      default:
        return value();
    }
  };
  const modifierOf = (): Record<string, Record<string, unknown>> => {
    const m: Record<string, Record<string, unknown>> = {};
    const n = 1 + Math.floor(rand() * 3);
    for (let i = 0; i < n; i++) {
      const op = pick(['$set', '$set', '$unset', '$inc', '$push', '$addToSet', '$pull']);
      (m[op] ??= {})[pick(fields)] = operand(op);
    }
    return m;
  };
  const run = (f: () => unknown): { ok: true; value: string } | { ok: false } => {
    try {
      return { ok: true, value: JSON.stringify(f()) };
    } catch {
      return { ok: false };
    }
  };

  let direct = 0;
  for (let i = 0; i < 10_000; i++) {
    const doc = docOf();
    const modifier = modifierOf();
    const expected = run(() => {
      const copy = cloneDeep(doc);
      mingoUpdate(copy, modifier as any, undefined, undefined, { cloneMode: 'deep' });
      return copy;
    });
    const got = run(() => applyUpdate(doc, modifier, undefined, false));
    if (applyDirectSafe(doc, modifier)) direct++;
    if (expected.ok !== got.ok || (expected.ok && got.ok && expected.value !== got.value)) {
      throw new Error(`mismatch on ${JSON.stringify(doc)} with ${JSON.stringify(modifier)}: mingo ${JSON.stringify(expected)} direct ${JSON.stringify(got)}`);
    }
  }
  expect(direct).toBeGreaterThan(2_500); // the direct path was really exercised
});

function applyDirectSafe(doc: Record<string, any>, modifier: Record<string, any>): boolean {
  try {
    return applyDirect(cloneDeep(doc) as any, modifier) !== undefined;
  } catch {
    return false;
  }
}

test('an upsert may set _id through $setOnInsert; $setOnInsert is ignored on updates', () => {
  expect(applyUpdate({ a: 1 }, { $setOnInsert: { _id: 'x', b: 2 }, $set: { c: 3 } }, undefined, true)).toEqual({ _id: 'x', a: 1, b: 2, c: 3 });
  expect(applyUpdate({ _id: 'y', a: 1 }, { $setOnInsert: { _id: 'x', b: 2 } }, undefined, false)).toEqual({ _id: 'y', a: 1 });
  expect(() => applyUpdate({ _id: 'y' }, { $set: { _id: 'z' } }, undefined, false)).toThrow(/_id/);
});
