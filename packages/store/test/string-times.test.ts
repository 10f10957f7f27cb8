// convertStringTimes on the embedded engine: documents written while the schema said `type: String`
// are read back with the Date schema, converted in batches, and a second run finds nothing.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { convertStringTimes, datePaths, isoTime, mongoose, openStore } from '../src';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

function schemas(time: typeof String | typeof Date) {
  const optOut = new mongoose.Schema({ topicId: String, at: { type: time, required: true } }, { _id: false });
  const consent = new mongoose.Schema({ text: String, at: { type: time } }, { _id: false });
  return new mongoose.Schema(
    { _id: String, accountId: String, name: String, registeredAt: { type: time, required: true }, consent: { type: consent }, optOuts: { type: [optOut], default: undefined } },
    { versionKey: false },
  );
}

test('datePaths names Date paths at the top, in subdocuments and in document arrays', () => {
  expect(datePaths(schemas(Date)).sort()).toEqual(['consent.at', 'optOuts.at', 'registeredAt']);
  expect(datePaths(schemas(String))).toEqual([]);
});

test('string times become Dates in batches, other values untouched; a second run converts nothing', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'store-string-times-'));
  dirs.push(dir);
  const iso = (i: number) => new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString();
  const old = await openStore({ dataDir: dir });
  await old.collection('people', schemas(String)).insertMany(
    Array.from({ length: 2500 }, (_v, i) => ({
      _id: `p${String(i).padStart(4, '0')}`,
      accountId: i % 2 ? 'a' : 'b',
      name: iso(i), // a string that looks like a time on a String path stays a string
      registeredAt: iso(i),
      ...(i % 3 === 0 ? { consent: { text: 'yes', at: iso(i + 1) } } : {}),
      ...(i % 5 === 0 ? { optOuts: [{ topicId: 't1', at: iso(i + 2) }, { topicId: 't2', at: iso(i + 3) }] } : {}),
    })),
  );
  await old.close();

  const store = await openStore({ dataDir: dir });
  const schema = schemas(Date);
  const people = store.collection<any>('people', schema); // eslint-disable-line @typescript-eslint/no-explicit-any
  // a row written by the new build meanwhile: nothing to convert there
  await people.insertOne({ _id: 'new', accountId: 'a', name: 'n', registeredAt: new Date(iso(9999)) });
  expect(await convertStringTimes(people, schema, { batchSize: 1000 })).toEqual({ found: 2500, converted: 2500 });

  const p0 = await people.findOne({ _id: 'p0000' });
  expect(p0.registeredAt).toEqual(new Date(iso(0)));
  expect(p0.consent).toEqual({ text: 'yes', at: new Date(iso(1)) });
  expect(p0.optOuts).toEqual([{ topicId: 't1', at: new Date(iso(2)) }, { topicId: 't2', at: new Date(iso(3)) }]);
  expect(p0.name).toBe(iso(0));
  const p1 = await people.findOne({ _id: 'p0001' });
  expect(p1.consent).toBeUndefined();
  expect(p1.optOuts).toBeUndefined();
  // range filters and sorts now compare Dates, old and new rows alike
  expect(await people.countDocuments({ accountId: 'a', registeredAt: { $gte: new Date(iso(1000)), $lt: new Date(iso(2000)) } })).toBe(500);
  const last = await people.find({ accountId: 'a' }, { sort: { registeredAt: -1 }, limit: 2 });
  expect(last.map((d) => d._id)).toEqual(['new', 'p2499']);

  expect(await convertStringTimes(people, schema)).toEqual({ found: 0, converted: 0 });
  await store.close();
  // and the conversion was journaled: a restart reads Dates
  const again = await openStore({ dataDir: dir });
  const reread = await again.collection<any>('people', schemas(Date)).findOne({ _id: 'p2495' }); // eslint-disable-line @typescript-eslint/no-explicit-any
  expect(reread.optOuts[0].at).toBeInstanceOf(Date);
  await again.close();
});

test('a string that is not a time fails the run, naming the document and path', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'store-string-times-'));
  dirs.push(dir);
  const old = await openStore({ dataDir: dir });
  await old.collection('people', schemas(String)).insertOne({ _id: 'x', registeredAt: 'yesterday' });
  await old.close();
  const store = await openStore({ dataDir: dir });
  const schema = schemas(Date);
  await expect(convertStringTimes(store.collection('people', schema), schema)).rejects.toThrow('people x: registeredAt holds "yesterday", which is not a time');
  await store.close();
});

test('isoTime: a stored Date, or a string an older build wrote, as the same ISO string', () => {
  expect(isoTime(new Date('2026-01-02T03:04:05.678Z'))).toBe('2026-01-02T03:04:05.678Z');
  expect(isoTime('2026-01-02T03:04:05.678Z')).toBe('2026-01-02T03:04:05.678Z');
});
