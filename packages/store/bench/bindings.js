// Which SQLite binding the embedded engine uses, by measurement: node:sqlite (built into Node 24)
// against better-sqlite3 (a native addon built from source; not a dependency of the project: point
// BETTER_SQLITE3 at an installed copy to include it). Same schema as the engine's tables (a JSON
// document per row, expression indexes on json_extract keys), same pragmas (WAL, synchronous=NORMAL),
// interleaved rounds. Figures: batched inserts/s, single-row commits/s, an indexed page of 50
// (SELECT + JSON.parse), and a count scanning 200,000 documents' JSON in SQL; and the RSS after.
// Usage: node packages/store/bench/bindings.js [rows=200000] [rounds=3]
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROWS = Number(process.argv[2] ?? 200_000);
const ROUNDS = Number(process.argv[3] ?? 3);
const bindings = { 'node:sqlite': (file) => new (require('node:sqlite').DatabaseSync)(file) };
if (process.env.BETTER_SQLITE3) bindings['better-sqlite3'] = (file) => new (require(process.env.BETTER_SQLITE3))(file);

const key = (p) => `ifnull(json_extract(doc, '$."${p}"'), -9e999)`;
const SCHEMA = [
  'CREATE TABLE s (rid INTEGER PRIMARY KEY, _id TEXT NOT NULL UNIQUE, doc TEXT NOT NULL)',
  `CREATE UNIQUE INDEX s_email ON s (${key('accountId')}, ${key('email')})`,
  `CREATE INDEX s_status ON s (${key('accountId')}, ${key('status')}, ifnull(json_extract(doc, '$."registeredAt"."$date"'), -9e999))`,
];
const doc = (i) => JSON.stringify({ _id: `id-${i}`, accountId: `acct-${i % 20}`, email: `user${i}@example.com`, firstName: `Name${i % 1000}`, status: i % 3 ? 'ACTIVE' : 'UNSUBSCRIBED', tags: i % 2 ? ['t1'] : [], registeredAt: { $date: 1_700_000_000_000 + i * 1000 } });
const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;

function run(name, open) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bindings-'));
  const db = open(path.join(dir, 'db.sqlite'));
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL');
  for (const sql of SCHEMA) db.exec(sql);
  const insert = db.prepare('INSERT INTO s (_id, doc) VALUES (?, ?)');
  let t0 = process.hrtime.bigint();
  for (let i = 0; i < ROWS; i += 1000) {
    db.exec('BEGIN');
    for (let k = i; k < i + 1000; k++) insert.run(`id-${k}`, doc(k));
    db.exec('COMMIT');
  }
  const batched = ROWS / (ms(t0) / 1000);
  t0 = process.hrtime.bigint();
  const SINGLE = 5000;
  for (let k = ROWS; k < ROWS + SINGLE; k++) {
    db.exec('BEGIN');
    insert.run(`id-${k}`, doc(k));
    db.exec('COMMIT');
  }
  const single = SINGLE / (ms(t0) / 1000);
  const page = db.prepare(`SELECT doc FROM s WHERE ${key('accountId')} = ? AND ${key('status')} = ? ORDER BY ifnull(json_extract(doc, '$."registeredAt"."$date"'), -9e999) DESC LIMIT 50 OFFSET 100`);
  t0 = process.hrtime.bigint();
  const PAGES = 2000;
  for (let i = 0; i < PAGES; i++) page.all(`acct-${i % 20}`, 'ACTIVE').map((r) => JSON.parse(r.doc));
  const pageMs = ms(t0) / PAGES;
  const scan = db.prepare(`SELECT count(*) AS n FROM s WHERE json_extract(doc, '$."firstName"') = ? AND json_array_length(doc, '$."tags"') > 0`);
  t0 = process.hrtime.bigint();
  scan.get('Name7');
  const scanMs = ms(t0);
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
  return { binding: name, 'batched inserts/s': Math.round(batched), 'single-row commits/s': Math.round(single), 'page of 50 (ms)': pageMs.toFixed(3), [`JSON scan of ${ROWS + SINGLE} rows (ms)`]: Math.round(scanMs), 'RSS (MB)': Math.round(process.memoryUsage().rss / 1e6) };
}

const rows = [];
for (let r = 0; r < ROUNDS; r++) for (const [name, open] of Object.entries(bindings)) rows.push(run(name, open));
console.table(rows);
