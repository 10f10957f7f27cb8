// Long reads of the embedded engine beside short ones: one account with N contacts (default
// 1,000,000; ~330 bytes of JSON each, as the segment service's projection), then
//  - a count tested in JavaScript (a regular expression that is no literal text: every row decoded)
//    and a count SQLite evaluates on the stored documents (pushed down), row by row on the account's
//    index range, and the same count on a copy of the collection that keeps its accounts' counts
//    (countBy), which walks the table in chunks SQLite counts, interleaved in the same run;
//  - point reads (findOne by _id, what a GET does in the store) issued back to back, their latency
//    p50/p99 with nothing else running (the baseline) and while each count runs (interleaved, same run);
//  - the process's RSS after each phase, and CPU per counted row.
// Usage: npx tsc -b packages/store && node packages/store/bench/long-reads.js [N=1000000]
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { openStore, mongoose } = require('..');

const N = Number(process.argv[2] ?? 1_000_000);
const mb = () => Math.round(process.memoryUsage().rss / 1e6);
const pct = (ms, p) => ms.sort((a, b) => a - b)[Math.min(ms.length - 1, Math.floor(ms.length * p))].toFixed(2);

const schema = new mongoose.Schema(
  {
    _id: String,
    accountId: { type: String, required: true },
    email: String,
    firstName: String,
    lastName: String,
    subscriberStatus: String,
    registeredAt: Date,
    topics: [String],
    fields: mongoose.Schema.Types.Mixed,
    orders: [{ _id: false, sourceId: String, total: Number, at: Date }],
  },
  { versionKey: false },
);
schema.index({ accountId: 1, registeredAt: 1, _id: 1 });

const contact = (i) => ({
  _id: `c-${String(i).padStart(9, '0')}`,
  accountId: 'acct-1',
  email: `reader${i}@example.com`,
  firstName: `First${i % 997}`,
  lastName: `Last${i % 991}`,
  subscriberStatus: i % 10 ? 'ACTIVE' : 'UNSUBSCRIBED',
  registeredAt: new Date(1_700_000_000_000 + i * 1000),
  topics: i % 3 ? ['t-news'] : [],
  fields: { city: `City${i % 50}`, plan: i % 4 ? 'free' : 'pro' },
  orders: [{ sourceId: 'shop', total: i % 200, at: new Date(1_700_000_000_000 + i * 500) }],
});

/**
 * Point reads back to back until `done()`, each issued from a new turn of the event loop (as a
 * request arrives), timed from then: a read waits for whatever holds the loop. Their latencies.
 */
async function pointReads(c, done) {
  const ms = [];
  let i = 0;
  while (!done()) {
    const t = performance.now();
    await new Promise((resolve) => setImmediate(resolve));
    await c.findOne({ _id: `c-${String((i++ * 7919) % N).padStart(9, '0')}` });
    ms.push(performance.now() - t);
  }
  return ms;
}

async function during(c, label, run) {
  let finished = false;
  const cpu = process.cpuUsage();
  const t = performance.now();
  const [result, ms] = await Promise.all([run().finally(() => (finished = true)), pointReads(c, () => finished)]);
  const wall = performance.now() - t;
  const used = process.cpuUsage(cpu);
  console.log(
    `${label}: ${result} in ${(wall / 1000).toFixed(2)} s (${(((used.user + used.system) * 1000) / N).toFixed(2)} ns CPU per row, point reads included); ` +
      `${ms.length} point reads meanwhile, p50 ${pct(ms, 0.5)} ms, p99 ${pct(ms, 0.99)} ms, max ${pct(ms, 1)} ms; RSS ${mb()} MB`,
  );
}

(async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'store-long-reads-'));
  try {
    const store = await openStore({ dataDir: dir });
    const c = store.collection('contacts', schema);
    const walked = store.collection('contacts_counted', schema, { countBy: 'accountId' });
    const t = performance.now();
    for (let i = 0; i < N; i += 10_000) {
      const docs = Array.from({ length: Math.min(10_000, N - i) }, (_, k) => contact(i + k));
      await c.insertMany(docs);
      await walked.insertMany(docs);
    }
    console.log(`${N.toLocaleString('en-US')} contacts stored twice in ${((performance.now() - t) / 1000).toFixed(1)} s; RSS ${mb()} MB`);

    for (let round = 1; round <= 2; round++) {
      const end = performance.now() + 3000;
      const base = await pointReads(c, () => performance.now() > end);
      console.log(`round ${round} baseline: ${base.length} point reads alone in 3 s, p50 ${pct(base, 0.5)} ms, p99 ${pct(base, 0.99)} ms; RSS ${mb()} MB`);
      await during(c, `round ${round} count tested in JavaScript`, () => c.countDocuments({ accountId: 'acct-1', email: { $regex: /7@ex.mple/ } }));
      const pushed = { accountId: 'acct-1', subscriberStatus: 'ACTIVE', firstName: 'First7' };
      await during(c, `round ${round} count pushed down to SQL, row by row`, () => c.countDocuments(pushed));
      await during(c, `round ${round} count pushed down to SQL, table walked in chunks`, () => walked.countDocuments(pushed));
    }
    await store.close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
})();
