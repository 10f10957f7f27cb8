#!/usr/bin/env node
// bench/subscriber-startup: how long the subscriber service takes to be ready (gRPC listening, the
// "ready" log line) on an embedded store holding --subscribers (default 1,000,000) subscribers in
// --accounts accounts (default 10), against the same service on an empty data directory, started
// interleaved with it (--runs times each). The first start on the large store also runs the
// string-time migration's pass once (it finds nothing and records that); the runs after it skip it.
// Target (issue 25): ready in < 5 s with 1,000,000 subscribers, i.e. nothing loaded whole at start.
// Usage: npm run bench:subscriber-startup [-- --subscribers 1000000 --runs 3]
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { parseArgs } = require('node:util');
const { startNatsServer, startService } = require('@mailer/testing');
const { DatabaseSync } = require('node:sqlite');
const { openStore } = require('@mailer/store');
const { encodeDocument } = require('@mailer/store/dist/codec');
const { subscriberSchema } = require('../services/subscriber/dist/store/subscribers');
const { rssMb, verdict } = require('./lib');

const { values: args } = parseArgs({ options: { subscribers: { type: 'string', default: '1000000' }, accounts: { type: 'string', default: '10' }, runs: { type: 'string', default: '3' } } });
const N = Number(args.subscribers);
const ACCOUNTS = Number(args.accounts);
const uuid = (prefix, i) => `${prefix}-0000-4000-8000-${String(i).padStart(12, '0')}`;

// Loading a million subscribers through the API (or mongoose casting) would take most of an hour
// here: a sample goes through the store (schema casting) to check the shape, the rest is written
// straight into the service's database file as the store writes rows (codec.ts's JSON).
async function fill(dataDir) {
  const dir = path.join(dataDir, 'subscriber');
  const store = await openStore({ dataDir: dir });
  const subscribers = store.collection('subscribers', subscriberSchema);
  const t0 = Date.now();
  const at = Date.parse('2024-01-01T00:00:00Z');
  const doc = (k) => ({
        _id: uuid('00000000', k),
        accountId: uuid('aaaaaaaa', k % ACCOUNTS),
        email: `user${k}@example.org`,
        firstName: `Name${k % 1000}`,
        status: k % 7 === 0 ? 'UNSUBSCRIBED' : 'ACTIVE',
        ...(k % 3 === 0 ? { tags: [uuid('bbbbbbbb', k % 20)] } : {}),
        topicIds: [uuid('cccccccc', k % 4)],
        fields: { city: `City ${k % 50}`, age: 18 + (k % 60) },
        registeredAt: new Date(at + k * 1000),
        updatedAt: new Date(at + k * 1000),
        version: 1,
      });
  const sample = Array.from({ length: 100 }, (_v, k) => doc(k));
  await subscribers.insertMany(sample);
  const stored = await subscribers.find({}, { sort: { _id: 1 } });
  if (stored.some((d, k) => encodeDocument(d) !== encodeDocument(sample[k]))) throw new Error('the generated documents are not stored as written');
  await store.close();
  const db = new DatabaseSync(path.join(dir, 'store.sqlite'));
  const insert = db.prepare('INSERT INTO subscribers (_id, doc) VALUES (?, ?)');
  for (let i = sample.length; i < N; i += 10_000) {
    db.exec('BEGIN');
    for (let k = i; k < Math.min(N, i + 10_000); k++) {
      const d = doc(k);
      insert.run(d._id, encodeDocument(d));
    }
    db.exec('COMMIT');
  }
  db.close();
  const bytes = fs.readdirSync(path.join(dataDir, 'subscriber')).reduce((sum, f) => sum + fs.statSync(path.join(dataDir, 'subscriber', f)).size, 0);
  console.log(`loaded ${N.toLocaleString('en')} subscribers in ${((Date.now() - t0) / 1000).toFixed(1)} s (${(N / ((Date.now() - t0) / 1000)).toFixed(0)}/s); database ${(bytes / 1e6).toFixed(0)} MB`);
}

async function timeStart(natsUrl, dataDir) {
  const t0 = process.hrtime.bigint();
  const svc = await startService('subscriber', { NATS_URL: natsUrl, DATA_DIR: dataDir }, 120_000);
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const rss = rssMb(svc.pid).rss;
  const migration = svc.output().split('\n').filter((l) => l.includes('string times')).map((l) => JSON.parse(l)).find((l) => l.collection === 'subscribers');
  await svc.stop();
  return { ms, rss, migration: migration ? (migration.found !== undefined ? `pass over every subscriber: ${migration.ms} ms` : 'skipped') : '-' };
}

(async () => {
  const nats = await startNatsServer();
  const big = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-subscriber-startup-'));
  const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-subscriber-startup-empty-'));
  try {
    await fill(big);
    const rows = [];
    for (let r = 0; r < Number(args.runs) + 1; r++) {
      const base = await timeStart(nats.url, empty);
      const large = await timeStart(nats.url, big);
      rows.push({ run: r === 0 ? 'first' : `#${r + 1}`, emptyMs: Math.round(base.ms), largeMs: Math.round(large.ms), ratio: (large.ms / base.ms).toFixed(2), largeRssMb: large.rss, migration: large.migration });
    }
    console.table(rows);
    const later = Math.max(...rows.slice(1).map((r) => r.largeMs));
    console.log(`subscriber service ready with ${N.toLocaleString('en')} subscribers: worst ${later} ms (target < 5000 ms): ${verdict(later < 5000)}; ` +
      `the first start, with the one-off pass of the migration (after an upgrade), ${rows[0].largeMs} ms`);
  } finally {
    await nats.stop();
    fs.rmSync(big, { recursive: true, force: true });
    fs.rmSync(empty, { recursive: true, force: true });
  }
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
