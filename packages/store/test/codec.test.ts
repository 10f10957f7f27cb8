// The journal encoder's hand-written walk must produce exactly what JSON.stringify with the tagging
// replacer produces (the format every existing journal and snapshot was written in).
import { Types } from 'mongoose';
import { decodeRecord, encodeRecord, JournalOp } from '../src/codec';

/** The reference: the encoder as it was, JSON.stringify with a replacer. */
function reference(ops: JournalOp[]): string {
  return (
    JSON.stringify(ops, function (this: any, key: string, value: unknown) {
      const raw = this[key];
      if (raw instanceof Date) return { $date: raw.getTime() };
      if (raw !== null && typeof raw === 'object' && raw._bsontype === 'ObjectId') return { $oid: raw.toHexString() };
      if (Buffer.isBuffer(raw)) return { $binary: raw.toString('base64') };
      return value;
    }) + '\n'
  );
}

let seed = 42;
const rand = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
const pick = <T>(xs: T[]): T => xs[Math.floor(rand() * xs.length)];

function randomValue(depth: number): unknown {
  const leaves: (() => unknown)[] = [
    () => pick(['', 'plain', 'quote " and \\ backslash', 'line\nbreak\ttab', 'unicode é ✓ 😀', '\u2028\u2029', '\ud800 lone', '$date', '<html>&amp;</html>']),
    () => pick([0, -0, 1, -1.5, 3.14159, 1e21, 1e-7, 2 ** 53, NaN, Infinity, -Infinity, Number.MAX_VALUE]),
    () => pick([true, false, null, undefined]),
    () => new Date(pick([0, 1714557600000, -1, NaN, 8.64e15])),
    () => new Types.ObjectId(),
    () => Buffer.from(pick(['', 'abc', 'binary \u0000 data'])),
    () => () => 1,
    () => Symbol('s'),
  ];
  if (depth > 3 || rand() < 0.5) return pick(leaves)();
  if (rand() < 0.4) return Array.from({ length: Math.floor(rand() * 4) }, () => randomValue(depth + 1));
  const o: Record<string, unknown> = rand() < 0.1 ? Object.create(null) : {};
  const n = Math.floor(rand() * 5);
  for (let i = 0; i < n; i++) o[pick(['a', 'b', '_id', '1', '10', 'key "q"', 'é', 'status', 'at'])] = randomValue(depth + 1);
  return o;
}

describe('journal codec', () => {
  it('encodes exactly like JSON.stringify with the tagging replacer', () => {
    for (let i = 0; i < 3000; i++) {
      const ops: JournalOp[] = [];
      for (let j = 0; j < 1 + (i % 3); j++) ops.push(['coll', `id-${i}-${j}`, rand() < 0.1 ? null : ({ _id: `id-${i}`, v: randomValue(0), w: randomValue(1) } as any)]);
      expect(encodeRecord(ops)).toBe(reference(ops));
    }
  });

  it('falls back to JSON.stringify for values it does not walk', () => {
    class Point {
      constructor(readonly x: number) {}
    }
    const withToJSON = { toJSON: () => 'custom' };
    const deep: any = {};
    let cur = deep;
    for (let i = 0; i < 300; i++) cur = cur.next = {};
    const odd = [new Point(1), withToJSON, deep, { _bsontype: 'ObjectId', toHexString: () => 'ab' }, Object.assign([1], { toJSON: () => 'arr' }), new Map([['a', 1]]), new Set([1]), /re/g, new String('s'), new Number(3)];
    for (const v of odd) {
      const ops: JournalOp[] = [['c', 'x', { _id: 'x', v } as any]];
      expect(encodeRecord(ops)).toBe(reference(ops));
    }
    expect(() => encodeRecord([['c', 'x', { _id: 'x', n: BigInt(1) } as any]])).toThrow(TypeError);
    const cyclic: any = { _id: 'x' };
    cyclic.self = cyclic;
    expect(() => encodeRecord([['c', 'x', cyclic]])).toThrow(TypeError);
  });

  it('round-trips tagged values', () => {
    const at = new Date(1714557600000);
    const id = new Types.ObjectId();
    const [[, , doc]] = decodeRecord(encodeRecord([['c', 'x', { _id: 'x', at, id, bin: Buffer.from('hi'), list: [at, { at }] }]]));
    expect(doc).toEqual({ _id: 'x', at, id, bin: Buffer.from('hi'), list: [at, { at }] });
  });
});
