// Embedded engine (SQLite) figures: insert rate and RSS for N small documents, then a tenant page query, then a reopen.
// Usage: npx tsc -b packages/store && node packages/store/bench/embedded.js [N=100000] [mode=concurrent|sequential|batch]
// Run with --expose-gc for a settled RSS figure.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { openStore, mongoose } = require('..');

const N = Number(process.argv[2] ?? 100_000);
const mode = process.argv[3] ?? 'concurrent';
const mib = (b) => (b / 1024 / 1024).toFixed(0) + ' MiB';

(async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'store-bench-'));
  try {
    const store = await openStore({ dataDir: dir });
    const schema = new mongoose.Schema(
      {
        _id: String,
        accountId: { type: String, required: true },
        email: { type: String, required: true },
        firstName: { type: String, default: null },
        status: { type: String, enum: ['active', 'unsubscribed'], required: true },
        tags: { type: [String], default: [] },
        registeredAt: { type: Date, required: true },
      },
      { versionKey: false },
    );
    schema.index({ accountId: 1, email: 1 }, { unique: true });
    const subs = store.collection('subscribers', schema);
    const doc = (i) => ({
      _id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      accountId: `acct-${i % 20}`,
      email: `user${i}@example.com`,
      firstName: `Name${i % 1000}`,
      status: i % 3 ? 'active' : 'unsubscribed',
      tags: i % 2 ? ['t1'] : [],
      registeredAt: new Date(1_700_000_000_000 + i * 1000),
    });

    const t0 = process.hrtime.bigint();
    if (mode === 'sequential') {
      for (let i = 0; i < N; i++) await subs.insertOne(doc(i));
    } else if (mode === 'batch') {
      for (let i = 0; i < N; i += 1000) await subs.insertMany(Array.from({ length: Math.min(1000, N - i) }, (_, k) => doc(i + k)));
    } else {
      // 100 writers in flight, each awaiting its insertOne: group commit shares the commits
      let next = 0;
      await Promise.all(Array.from({ length: 100 }, async () => { while (next < N) await subs.insertOne(doc(next++)); }));
    }
    const secs = Number(process.hrtime.bigint() - t0) / 1e9;
    global.gc?.();
    const mem = process.memoryUsage();
    console.log(`insert (${mode}): ${N} docs in ${secs.toFixed(2)} s = ${Math.round(N / secs)} docs/s; RSS ${mib(mem.rss)}, heap used ${mib(mem.heapUsed)}; database ${mib(fs.statSync(path.join(dir, 'store.sqlite')).size + (fs.existsSync(path.join(dir, 'store.sqlite-wal')) ? fs.statSync(path.join(dir, 'store.sqlite-wal')).size : 0))}`);

    const filter = { accountId: 'acct-1', status: 'active' };
    const times = [];
    for (let r = 0; r < 7; r++) {
      const t = process.hrtime.bigint();
      await Promise.all([subs.find(filter, { sort: { registeredAt: -1, _id: -1 }, skip: 50, limit: 50 }), subs.countDocuments(filter), subs.countDocuments({ accountId: 'acct-1' })]);
      times.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
    console.log(`page of 50 + 2 counts in one account (${N / 20} docs): median ${times.sort((a, b) => a - b)[3].toFixed(1)} ms`);
    await store.close();

    const t1 = process.hrtime.bigint();
    const reopened = await openStore({ dataDir: dir });
    reopened.collection('subscribers', schema);
    console.log(`reopen (nothing loaded): ${(Number(process.hrtime.bigint() - t1) / 1e9).toFixed(2)} s; RSS ${mib(process.memoryUsage().rss)}`);
    await reopened.close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
})();
