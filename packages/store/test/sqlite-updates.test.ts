// Updates on the embedded engine (SQLite) do only the work they need: the index keys live in columns
// beside the document (src/sqlite/keys.ts), and an update writes only the index entries whose keys
// it changes. Proved by what SQLite writes (pages appended to the WAL per committed update), by the
// key columns always equal to the documents' keys after every kind of update, and by a data
// directory of the previous layout (indexes on expressions of the document) upgraded in place.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Query } from 'mingo';
import { DocumentValidationError, DuplicateKeyError, mongoose, openStore, Store } from '../src';
import type { SqliteCollection } from '../src/sqlite/collection';

const tempDirs: string[] = [];
const openStores: Store[] = [];
const probes: DatabaseSync[] = [];

afterAll(async () => {
  for (const probe of probes) probe.close();
  for (const store of openStores) await store.close().catch(() => undefined);
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
});

async function open(dir?: string): Promise<{ store: Store; dir: string }> {
  dir ??= fs.mkdtempSync(path.join(os.tmpdir(), 'store-updates-'));
  if (!tempDirs.includes(dir)) tempDirs.push(dir);
  const store = await openStore({ dataDir: dir });
  openStores.push(store);
  return { store, dir };
}

/** A second connection to a store's file, as an operator's sqlite3 shell would have. */
function probe(dir: string): DatabaseSync {
  const db = new DatabaseSync(path.join(dir, 'store.sqlite'));
  probes.push(db);
  return db;
}

interface Message {
  _id: string;
  accountId: string;
  email: string;
  status: string;
  tracking?: { opens?: boolean; clicks?: boolean; city?: string | null };
  createdAt: Date;
  sentAt?: Date | null;
  deliveredAt?: Date | null;
  bouncedAt?: Date | null;
  openedAt?: Date | null;
  clickedAt?: Date | null;
  complainedAt?: Date | null;
  dedupeKey?: string | null;
  audienceKey?: string;
  confirmedAt?: Date | null;
  openCount?: number;
  attempts?: unknown[];
  history?: unknown[];
  sending?: unknown;
  tags?: string[];
}

/** A message record as the messaging service keeps it: a dozen indexes, partial, sparse and multikey ones, a kept count. */
function messageSchema({ byCity = true } = {}) {
  const date = { type: Date, default: null };
  const schema = new mongoose.Schema(
    {
      _id: String,
      accountId: { type: String, required: true },
      email: { type: String, required: true },
      status: { type: String, required: true, enum: ['QUEUED', 'SENT', 'DELIVERED', 'BOUNCED'] },
      tracking: { opens: Boolean, clicks: Boolean, city: String },
      createdAt: { type: Date, required: true },
      sentAt: date,
      deliveredAt: date,
      bouncedAt: date,
      openedAt: date,
      clickedAt: date,
      complainedAt: date,
      dedupeKey: { type: String, default: null },
      audienceKey: String,
      confirmedAt: Date,
      openCount: { type: Number, default: 0 },
      attempts: { type: [mongoose.Schema.Types.Mixed], default: [] },
      history: { type: [mongoose.Schema.Types.Mixed], default: [] },
      sending: { type: mongoose.Schema.Types.Mixed, default: null },
      tags: { type: [String], default: undefined },
    },
    { versionKey: false, minimize: false },
  );
  schema.index({ accountId: 1, dedupeKey: 1 }, { unique: true, partialFilterExpression: { dedupeKey: { $gt: '' } }, name: 'dedupe' });
  schema.index({ accountId: 1, audienceKey: 1, status: 1 }, { partialFilterExpression: { audienceKey: { $gt: '' } } });
  schema.index({ accountId: 1, createdAt: -1 });
  schema.index({ accountId: 1, email: 1, createdAt: -1 });
  schema.index({ accountId: 1, email: 1, bouncedAt: -1 });
  for (const field of ['sentAt', 'deliveredAt', 'openedAt', 'clickedAt', 'bouncedAt', 'complainedAt']) schema.index({ accountId: 1, [field]: 1 });
  if (byCity) schema.index({ accountId: 1, 'tracking.city': 1 });
  schema.index({ accountId: 1, confirmedAt: 1 }, { sparse: true });
  schema.index({ accountId: 1, tags: 1 });
  return schema;
}
const MESSAGES = messageSchema();

const message = (i: number): Message => ({
  // ids in no particular order, as UUIDs are: neighbours in one index are not neighbours in another
  _id: `m-${((i * 7919) % 100_003).toString(36).padStart(5, '0')}-${i}`,
  accountId: `acc-${i % 3}`,
  email: `reader${(i * 31) % 997}@example.org`,
  status: 'QUEUED',
  tracking: { opens: true, clicks: i % 2 === 0 },
  createdAt: new Date(1_700_000_000_000 + i * 1000),
  dedupeKey: i % 4 === 0 ? `key-${i}` : null,
  ...(i % 5 === 0 ? { audienceKey: `send-${i % 10}` } : {}),
  history: [{ status: 'QUEUED', at: new Date(1_700_000_000_000 + i * 1000) }],
  ...(i % 7 === 0 ? { tags: ['vip'] } : {}),
});

const messages = (store: Store, schema = MESSAGES) => store.collection<Message>('messages', schema, { countBy: 'accountId' }) as SqliteCollection<Message>;

describe('an update writes the index entries whose keys it changes, and no other', () => {
  let store: Store;
  let db: DatabaseSync;
  const N = 3000;

  beforeAll(async () => {
    const opened = await open();
    store = opened.store;
    db = probe(opened.dir);
    await messages(store).insertMany(Array.from({ length: N }, (_, i) => message(i)));
  });

  /** Pages SQLite appended to the WAL per commit while running `count` single-document updates, each committed alone. */
  async function pagesPerUpdate(count: number, update: (i: number) => Promise<unknown>): Promise<number> {
    const truncated = db.prepare('PRAGMA wal_checkpoint(TRUNCATE)').get() as { busy: number; log: number };
    expect(truncated).toMatchObject({ busy: 0, log: 0 });
    for (let i = 0; i < count; i++) await update(i);
    const { log } = db.prepare('PRAGMA wal_checkpoint(PASSIVE)').get() as { log: number };
    return log / count;
  }

  // each test updates its own documents: the i-th of test t is document 3 * (i * 17 % 1000) + t
  const doc = (t: number, i: number) => message(3 * ((i * 17) % 1000) + t);

  test('a claim ($set of an unindexed field) writes the document alone', async () => {
    const coll = messages(store);
    const pages = await pagesPerUpdate(40, (i) => coll.updateOne({ _id: doc(0, i)._id, accountId: doc(0, i).accountId }, { $set: { sending: { by: 'worker-1', until: new Date() } }, $push: { attempts: { at: new Date(), outcome: 'STARTED' } } }));
    // one leaf page of the table (an index entry rewritten would add a page of each of 12 indexes)
    expect(pages).toBeLessThanOrEqual(2);
  });

  test('an outcome ($set of one indexed date, $inc, $push) writes the document and that index', async () => {
    const coll = messages(store);
    const pages = await pagesPerUpdate(40, (i) =>
      coll.updateOne({ _id: doc(1, i)._id }, { $set: { status: 'DELIVERED', deliveredAt: new Date(), sending: null }, $inc: { openCount: 1 }, $push: { history: { status: 'DELIVERED', at: new Date() } } }),
    );
    // the document's page, and the deliveredAt index's entry moved from null to its date (two pages, a third when one splits)
    expect(pages).toBeLessThanOrEqual(4);
    expect(await coll.countDocuments({ accountId: 'acc-1', deliveredAt: { $ne: null } })).toBe(Array.from({ length: 40 }, (_, i) => doc(1, i)).filter((m) => m.accountId === 'acc-1').length);
  });

  test('a $set that leaves every value as it was writes nothing', async () => {
    const coll = messages(store);
    const pages = await pagesPerUpdate(20, async (i) => {
      const result = await coll.updateOne({ _id: doc(2, i)._id }, { $set: { status: 'QUEUED', tracking: doc(2, i).tracking } });
      expect(result).toEqual({ matchedCount: 1, modifiedCount: 0 });
    });
    expect(pages).toBe(0);
  });
});

/** Rows whose key column differs from the key its document gives (none, whatever the updates were). */
function staleKeys(db: DatabaseSync, coll: SqliteCollection<Message>): Record<string, number> {
  const stale: Record<string, number> = {};
  for (const c of coll.table.keys.list) {
    const { n } = db.prepare(`SELECT count(*) AS n FROM ${coll.table.sqlName} WHERE ${c.sql} IS NOT ${c.expr('doc')}`).get() as { n: number };
    if (n > 0) stale[c.name] = n;
  }
  return stale;
}

/** Filters on indexed paths: each must select what the reference semantics (mingo) select in the stored documents. */
const INDEXED_FILTERS: Record<string, unknown>[] = [
  { accountId: 'acc-1' },
  { accountId: 'acc-2', sentAt: { $ne: null } },
  { accountId: 'acc-0', sentAt: null },
  { accountId: 'acc-1', deliveredAt: { $gt: new Date(1_800_000_000_000) } },
  { accountId: 'acc-0', 'tracking.city': 'Lyon' },
  { accountId: 'acc-2', 'tracking.city': null },
  { accountId: 'acc-1', confirmedAt: { $exists: true } },
  { accountId: 'acc-0', confirmedAt: { $exists: false } },
  { accountId: 'acc-2', tags: 'vip' },
  { accountId: 'acc-0', dedupeKey: { $gt: '' } },
  { accountId: 'acc-1', audienceKey: 'send-5', status: 'SENT' },
  { accountId: 'acc-2', email: 'reader5@example.org', bouncedAt: { $ne: null } },
  { status: 'DELIVERED', openCount: { $gte: 2 } },
];

describe('key columns hold the keys of the documents after any update', () => {
  let seed = 11;
  const rand = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
  const date = () => new Date(1_700_000_000_000 + Math.floor(rand() * 200_000_000_000));
  const nullable = <T>(v: () => T) => (rand() < 0.3 ? null : v());

  /** One random update of one document, of every kind the services write (and some they do not). */
  function randomUpdate(): Record<string, Record<string, unknown>> {
    const ops: [string, string, unknown][] = [];
    for (let k = 0; k < 1 + Math.floor(rand() * 3); k++) {
      const r = Math.floor(rand() * 16);
      if (r === 0) ops.push(['$set', 'status', pick(['QUEUED', 'SENT', 'DELIVERED', 'BOUNCED'])]);
      else if (r === 1) ops.push(['$set', pick(['sentAt', 'deliveredAt', 'bouncedAt', 'openedAt', 'clickedAt', 'complainedAt', 'createdAt']), nullable(date)]);
      else if (r === 2) ops.push(['$set', 'tracking.city', nullable(() => pick(['Lyon', 'Oslo', '']))]);
      else if (r === 3) ops.push(['$set', 'tracking', rand() < 0.5 ? { opens: rand() < 0.5, city: pick(['Lyon', 'Oslo']) } : { clicks: true }]);
      else if (r === 4) ops.push(['$unset', pick(['tracking', 'tracking.city', 'sentAt', 'audienceKey', 'confirmedAt', 'dedupeKey']), '']);
      else if (r === 5) ops.push(['$set', 'dedupeKey', nullable(() => `key-${Math.floor(rand() * 200)}`)]);
      else if (r === 6) ops.push(['$set', 'audienceKey', pick(['send-5', 'send-0', ''])]);
      else if (r === 7) ops.push(['$set', 'confirmedAt', nullable(date)]);
      else if (r === 8) ops.push(['$set', 'email', `reader${Math.floor(rand() * 10)}@example.org`]);
      else if (r === 9) ops.push(['$set', 'accountId', pick(['acc-0', 'acc-1', 'acc-2'])]);
      else if (r === 10) ops.push(['$inc', 'openCount', 1]);
      else if (r === 11) ops.push(['$push', 'tags', pick(['vip', 'new'])]);
      else if (r === 12) ops.push(['$pull', 'tags', 'vip']);
      else if (r === 13) ops.push(['$max', 'deliveredAt', date()]); // through mingo
      else if (r === 14) ops.push(['$set', 'sending', { by: 'w', until: date() }]);
      else ops.push(['$set', 'tags', rand() < 0.5 ? [] : ['vip']]);
    }
    // one operator per path (MongoDB refuses two on one path, or on a path and its parent)
    const update: Record<string, Record<string, unknown>> = {};
    const taken: string[] = [];
    for (const [op, p, value] of ops) {
      if (taken.some((t) => t === p || t.startsWith(`${p}.`) || p.startsWith(`${t}.`))) continue;
      taken.push(p);
      (update[op] ??= {})[p] = value;
    }
    return update;
  }

  test('random updates, upserts, bulk writes, rolled-back transactions and refused unique keys', async () => {
    const { store, dir } = await open();
    const db = probe(dir);
    const coll = messages(store);
    await coll.insertMany(Array.from({ length: 600 }, (_, i) => message(i)));
    const ids = Array.from({ length: 600 }, (_, i) => message(i)._id);
    const refused = { duplicate: 0, invalid: 0 };
    const attempt = async (write: () => Promise<unknown>) => {
      try {
        await write();
      } catch (err) {
        if (err instanceof DuplicateKeyError) {
          refused.duplicate++;
          expect(err.index).toBe('dedupe');
        } else if (err instanceof DocumentValidationError) refused.invalid++; // createdAt: null
        else throw err;
      }
    };
    for (let round = 0; round < 6; round++) {
      await Promise.all(Array.from({ length: 150 }, () => attempt(() => coll.updateOne({ _id: pick(ids) }, randomUpdate()))));
      await attempt(() => coll.updateMany({ accountId: pick(['acc-0', 'acc-1', 'acc-2']), status: pick(['QUEUED', 'SENT']) }, { $set: { status: 'SENT', sentAt: date() } }));
      await attempt(() =>
        coll.bulkWrite([
          { updateOne: { filter: { _id: pick(ids) }, update: randomUpdate() } },
          { updateOne: { filter: { _id: `upserted-${round}` }, update: { $set: { status: 'QUEUED' }, $setOnInsert: { accountId: 'acc-1', email: 'new@example.org', createdAt: date(), tracking: { city: 'Oslo' } } }, upsert: true } },
          { updateMany: { filter: { accountId: 'acc-2', 'tracking.city': 'Lyon' }, update: { $set: { 'tracking.city': 'Oslo' } } } },
          { deleteOne: { filter: { _id: pick(ids) } } },
        ]),
      );
      await coll.updateOne({ _id: `upserted-${round}` }, { $set: { confirmedAt: date() } }, { upsert: true });
      await expect(
        store.transaction(async (tx) => {
          for (let k = 0; k < 20; k++) await attempt(() => coll.updateOne({ _id: pick(ids) }, randomUpdate(), { tx }));
          throw new Error('rolled back');
        }),
      ).rejects.toThrow(/rolled back|aborted/);
      expect({ round, stale: staleKeys(db, coll) }).toEqual({ round, stale: {} });
    }
    // unique keys and invalid documents were refused on the way, each write undoing itself alone
    expect(refused.duplicate).toBeGreaterThan(0);
    expect(refused.invalid).toBeGreaterThan(0);

    const stored = await coll.find({});
    for (const filter of INDEXED_FILTERS) {
      const reference = stored.filter((d) => new Query(filter).test(d)).map((d) => d._id).sort();
      expect({ filter, found: (await coll.find(filter)).map((d) => d._id).sort() }).toEqual({ filter, found: reference });
      expect({ filter, count: await coll.countDocuments(filter) }).toEqual({ filter, count: reference.length });
    }
  }, 120_000);
});

/**
 * A data directory as the previous version left it: the table without key columns, indexes on
 * expressions of the document, and the kept counts and the tags' side table kept by triggers that
 * read the document (their DDL as that version wrote it, recorded in _store_meta).
 */
function previousLayout(dir: string, rows: { _id: string; doc: string }[]): void {
  const db = new DatabaseSync(path.join(dir, 'store.sqlite'));
  const key = (p: string, row = 'doc') => `ifnull(json_extract(${row}, '$."${p}"'), -9e999)`;
  const counts = [
    `CREATE TABLE "messages.counts" (k PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID`,
    ...(['insert', 'update', 'delete'] as const).map((event) => {
      const add = (row: string, delta: number) => `INSERT INTO "messages.counts" (k, n) VALUES (${key('accountId', `${row}.doc`)}, ${delta}) ON CONFLICT (k) DO UPDATE SET n = n + ${delta};`;
      if (event === 'insert') return `CREATE TRIGGER "messages.counts.insert" AFTER INSERT ON "messages" BEGIN ${add('NEW', 1)} END`;
      if (event === 'delete') return `CREATE TRIGGER "messages.counts.delete" AFTER DELETE ON "messages" BEGIN ${add('OLD', -1)} END`;
      return `CREATE TRIGGER "messages.counts.update" AFTER UPDATE OF doc ON "messages" WHEN ${key('accountId', 'OLD.doc')} IS NOT ${key('accountId', 'NEW.doc')} BEGIN ${add('OLD', -1)} ${add('NEW', 1)} END`;
    }),
  ];
  const side = '"messages.accountId_1_tags_1.keys"';
  const select = (row: string) => `SELECT ${key('accountId', `${row}.doc`)}, e.value, ${row}.rid FROM json_each(${row}.doc, '$."tags"') AS e WHERE e.value IS NOT NULL`;
  const tags = [
    `CREATE TABLE ${side} (k0, v, rid INTEGER NOT NULL, PRIMARY KEY (k0, v, rid)) WITHOUT ROWID`,
    `CREATE INDEX "messages.accountId_1_tags_1.keys.rid" ON ${side} (rid)`,
    `CREATE TRIGGER "messages.accountId_1_tags_1.keys.insert" AFTER INSERT ON "messages" BEGIN INSERT OR IGNORE INTO ${side} ${select('NEW')}; END`,
    `CREATE TRIGGER "messages.accountId_1_tags_1.keys.update" AFTER UPDATE OF doc ON "messages" BEGIN DELETE FROM ${side} WHERE rid = OLD.rid; INSERT OR IGNORE INTO ${side} ${select('NEW')}; END`,
    `CREATE TRIGGER "messages.accountId_1_tags_1.keys.delete" AFTER DELETE ON "messages" BEGIN DELETE FROM ${side} WHERE rid = OLD.rid; END`,
  ];
  db.exec('PRAGMA journal_mode = WAL');
  db.exec('CREATE TABLE _store_meta (key TEXT PRIMARY KEY, value TEXT)');
  db.exec('CREATE TABLE "messages" (rid INTEGER PRIMARY KEY, _id TEXT NOT NULL UNIQUE, doc TEXT NOT NULL)');
  db.exec(`CREATE UNIQUE INDEX "messages.dedupe" ON "messages" (${key('accountId')}, ${key('dedupeKey')}) WHERE (${key('dedupeKey')} > '')`);
  db.exec(`CREATE INDEX "messages.accountId_1_createdAt_-1" ON "messages" (${key('accountId')}, ifnull(json_extract(doc, '$."createdAt"."$date"'), -9e999) DESC)`);
  for (const sql of [...counts, ...tags]) db.exec(sql);
  db.prepare('INSERT INTO _store_meta (key, value) VALUES (?, ?), (?, ?)').run('counts:messages.counts', counts.join(';\n'), `multikey:messages.accountId_1_tags_1.keys`, tags.join(';\n'));
  const insert = db.prepare('INSERT INTO "messages" (_id, doc) VALUES (?, ?)');
  for (const row of rows) insert.run(row._id, row.doc);
  db.close();
}

describe('a data directory of the previous layout is upgraded in place', () => {
  test('key columns added and filled, indexes rebuilt on them; kept counts and side tables go on; an index dropped and declared again is filled afresh', async () => {
    // the documents as a store wrote them
    const source = await open();
    await messages(source.store).insertMany(Array.from({ length: 900 }, (_, i) => message(i)));
    await source.store.close();
    const rows = probe(source.dir).prepare('SELECT _id, doc FROM "messages" ORDER BY rid').all() as { _id: string; doc: string }[];
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'store-updates-'));
    tempDirs.push(dir);
    previousLayout(dir, rows);

    let { store } = await open(dir);
    let coll = messages(store);
    const db = probe(dir);
    const check = async () => {
      expect(staleKeys(db, coll)).toEqual({});
      const stored = await coll.find({});
      for (const filter of INDEXED_FILTERS) {
        const reference = stored.filter((d) => new Query(filter).test(d)).map((d) => d._id).sort();
        expect({ filter, found: (await coll.find(filter)).map((d) => d._id).sort(), count: await coll.countDocuments(filter) }).toEqual({ filter, found: reference, count: reference.length });
      }
      return stored;
    };
    expect(await check()).toHaveLength(900);
    // nothing is indexed or counted from the document any more: an update of `doc` alone touches no index
    const schemaSql = (db.prepare(`SELECT sql FROM sqlite_master WHERE tbl_name = 'messages' AND sql IS NOT NULL AND type IN ('index', 'trigger')`).all() as { sql: string }[]).map((r) => r.sql);
    expect(schemaSql.filter((sql) => sql.startsWith('CREATE INDEX') || sql.startsWith('CREATE UNIQUE INDEX')).filter((sql) => /\bdoc\b/.test(sql))).toEqual([]);
    expect(schemaSql.filter((sql) => sql.includes('messages.counts') && /\bdoc\b/.test(sql))).toEqual([]);
    // the new triggers keep the counts and the tags' entries as documents move
    await coll.updateMany({ accountId: 'acc-0', tags: 'vip' }, { $set: { accountId: 'acc-2' } });
    await coll.updateMany({ accountId: 'acc-1' }, { $push: { tags: 'vip' } }, {});
    await coll.deleteMany({ accountId: 'acc-2', email: { $lt: 'reader3' } });
    await check();
    await store.close();

    // an index dropped from the schema drops its key column; declared again, the column is filled from the documents as they are then
    ({ store } = await open(dir));
    coll = messages(store, messageSchema({ byCity: false }));
    await coll.updateMany({ accountId: 'acc-1' }, { $set: { 'tracking.city': 'Lyon' } });
    expect((db.prepare(`SELECT name FROM pragma_table_info('messages')`).all() as { name: string }[]).map((r) => r.name)).not.toContain('key:string:tracking.city');
    await store.close();
    ({ store } = await open(dir));
    coll = messages(store);
    await check();
    expect(await coll.countDocuments({ accountId: 'acc-1', 'tracking.city': 'Lyon' })).toBe(await coll.countDocuments({ accountId: 'acc-1' }));
  }, 60_000);
});
