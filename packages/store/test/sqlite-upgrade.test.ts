// A data directory written before documents were stored as binary JSON (fixtures/text-json: main's
// build wrote it, documents as JSON text in a `doc TEXT` column, key columns, a kept count and an
// array's side table beside them) opens with this build as it is: every document is found, through
// every index, the kept count and a count walked in chunks read the text rows, and rows written
// afterwards (binary JSON) sit beside the text ones in the same table.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Query } from 'mingo';
import { DuplicateKeyError, mongoose, openStore, Store } from '../src';
import type { SqliteCollection } from '../src/sqlite/collection';
import type { SqliteStore } from '../src/sqlite/store';
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { collections, documents } = require('./fixtures/text-json/data') as {
  collections(m: typeof mongoose): Record<'contacts' | 'notes', { schema: mongoose.Schema; options: object }>;
  documents(): Record<'contacts' | 'notes', Record<string, unknown>[]>;
};

const FIXTURE = path.join(__dirname, 'fixtures/text-json/store.sqlite');
let dir: string;
let store: Store | undefined;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'store-upgrade-'));
  fs.copyFileSync(FIXTURE, path.join(dir, 'store.sqlite'));
});
afterEach(async () => {
  await store?.close();
  store = undefined;
  fs.rmSync(dir, { recursive: true, force: true });
});

/** The fixture's documents as make.js left them (one update, one delete), as the store returns them. */
function expected() {
  const { contacts, notes } = documents();
  for (const c of contacts) if (c.accountId === 'acc-b' && c.status === 'BOUNCED') c.status = 'ACTIVE';
  return { contacts: contacts.filter((c) => c._id !== 'c299'), notes };
}

const plain = (docs: unknown[]) => JSON.parse(JSON.stringify(docs)) as Record<string, unknown>[];
const byId = (a: { _id: unknown }, b: { _id: unknown }) => (String(a._id) < String(b._id) ? -1 : 1);
const storedAs = (db: DatabaseSync, table: string) => Object.fromEntries((db.prepare(`SELECT typeof(doc) AS t, count(*) AS n FROM "${table}" GROUP BY 1`).all() as { t: string; n: number }[]).map((r) => [r.t, r.n]));

function open() {
  const declared = collections(mongoose);
  const of = (name: 'contacts' | 'notes') => store!.collection<{ _id: string } & Record<string, unknown>>(name, declared[name].schema, declared[name].options);
  return { contacts: of('contacts') as SqliteCollection<{ _id: string } & Record<string, unknown>>, notes: of('notes') };
}

test('the fixture holds documents as JSON text (what the earlier build wrote)', () => {
  const db = new DatabaseSync(path.join(dir, 'store.sqlite'), { readOnly: true }); // the copy: no -shm beside the fixture
  try {
    expect(storedAs(db, 'contacts')).toEqual({ text: 299 });
    expect((db.prepare(`SELECT sql FROM sqlite_master WHERE name = 'contacts'`).get() as { sql: string }).sql).toMatch(/doc TEXT NOT NULL, "key:string:accountId"/);
  } finally {
    db.close();
  }
});

test('a data directory with documents stored as JSON text: every document found, by every index, counted, and written beside binary JSON', async () => {
  store = await openStore({ dataDir: dir });
  const { contacts, notes } = open();
  const want = expected();
  expect(plain(await contacts.find({})).sort(byId)).toEqual(plain(want.contacts).sort(byId));
  expect(plain(await notes.find({})).sort(byId)).toEqual(plain(want.notes).sort(byId));

  // filters served by the indexes (unique, list order, multikey, sparse, partial), SQL conditions on
  // members of the text documents (a Map of subdocuments, a document array), a sorted page
  const filters: Record<string, unknown>[] = [
    { accountId: 'acc-a', email: 'reader7@example.org' },
    { accountId: 'acc-a', createdAt: { $gte: new Date(Date.UTC(2026, 0, 20)) } },
    { accountId: 'acc-b', tags: 'vip' },
    { code: { $exists: true } },
    { accountId: 'acc-a', status: 'BOUNCED' },
    { accountId: 'acc-a', 'fields.city.text': 'Oslo', 'fields.age.number': { $gte: 40 } },
    { accountId: 'acc-b', orders: { $elemMatch: { sourceId: 's2', total: { $gte: 10 } } } },
    { 'profile.city': 'Paris' },
  ];
  for (const filter of filters) {
    const reference = want.contacts.filter((d) => new Query(filter).test(d)).map((d) => d._id).sort();
    expect({ filter, matches: reference.length > 0 }).toEqual({ filter, matches: true });
    expect({ filter, found: (await contacts.find(filter)).map((d) => d._id).sort(), count: await contacts.countDocuments(filter) }).toEqual({ filter, found: reference, count: reference.length });
  }
  const page = await contacts.find({ accountId: 'acc-a' }, { sort: { createdAt: -1, _id: -1 }, skip: 20, limit: 10 });
  const ordered = want.contacts.filter((d) => d.accountId === 'acc-a').sort((a, b) => +(b.createdAt as Date) - +(a.createdAt as Date) || (a._id < b._id ? 1 : -1));
  expect(page.map((d) => d._id)).toEqual(ordered.slice(20, 30).map((d) => d._id));

  // the kept count goes on from the text rows; acc-a holds two thirds of the table: its count is walked in chunks
  expect(await contacts.countDocuments({ accountId: 'acc-a' })).toBe(want.contacts.filter((d) => d.accountId === 'acc-a').length);
  const walked = { accountId: 'acc-a', 'profile.score': { $gte: 5 } };
  expect(contacts.table.countQuery((store as SqliteStore).reader(contacts.table)!, walked).chunked).toBeDefined();
  expect(await contacts.countDocuments(walked)).toBe(want.contacts.filter((d) => new Query(walked).test(d)).length);

  // writes: an updated row is stored as binary JSON, the indexes and the kept count follow it
  await contacts.updateMany({ accountId: 'acc-b', tags: 'vip' }, { $set: { accountId: 'acc-a' }, $push: { tags: 'moved' } });
  await contacts.insertOne({ _id: 'new', accountId: 'acc-a', email: 'new@example.org', tags: ['vip'], createdAt: new Date() });
  await expect(contacts.insertOne({ _id: 'dup', accountId: 'acc-a', email: 'reader1@example.org' })).rejects.toBeInstanceOf(DuplicateKeyError);
  const moved = want.contacts.filter((d) => d.accountId === 'acc-b' && (d.tags as string[]).includes('vip')).length;
  expect(moved).toBeGreaterThan(0);
  expect(await contacts.countDocuments({ accountId: 'acc-a', tags: 'moved' })).toBe(moved);
  expect(await contacts.countDocuments({ accountId: 'acc-a' })).toBe(want.contacts.filter((d) => d.accountId === 'acc-a').length + moved + 1);
  expect(await contacts.countDocuments({ accountId: 'acc-b', tags: 'vip' })).toBe(0);
  await store.close();
  store = undefined;

  const db = new DatabaseSync(path.join(dir, 'store.sqlite'), { readOnly: true });
  try {
    expect(storedAs(db, 'contacts')).toEqual({ text: 299 - moved, blob: moved + 1 });
  } finally {
    db.close();
  }
  // reopened: the mixed table reads as one
  store = await openStore({ dataDir: dir });
  const again = open();
  expect(await again.contacts.countDocuments({})).toBe(300);
  expect((await again.contacts.find({ accountId: 'acc-a', tags: 'vip' })).length).toBe(want.contacts.filter((d) => (d.tags as string[]).includes('vip')).length + 1);
});
