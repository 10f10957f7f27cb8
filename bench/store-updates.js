#!/usr/bin/env node
// bench/store-updates: CPU per single-document update on the embedded store (SQLite), on message
// records as the messaging service keeps them (its schema: 13 indexes, a kept count; ~850 bytes of
// JSON each), for one or more builds of @mailer/store, beside SQLite alone rewriting the same
// documents in a table without indexes (the floor: what the engine itself costs per update).
// Two update shapes, as the delivery worker writes them:
//   claim    $set of a field no index covers ({ sending: claim })
//   outcome  $set of an indexed time and the status ({ status, deliveredAt, sending: null })
// Each build, and the floor, runs in a process of its own holding its own store (same records);
// after a warm-up round, rounds alternate (A, B, ..., floor, A, B, ...) and each reports the CPU its
// process used per update (process.cpuUsage), with 20 writers in flight (the store's group commit).
// Builds are directories holding a built @mailer/store inside the repository (it finds node_modules
// through it): `packages/store/dist` (the default), or a copy of an earlier one, e.g.
//   git archive main packages/store/src | tar -x -C .ab/base && cp tsconfig.base.json .ab/base/ &&
//   cp packages/store/tsconfig.json .ab/base/packages/store/ && npx tsc -p .ab/base/packages/store
// then `node bench/store-updates.js .ab/base/packages/store/dist packages/store/dist`.
// Usage: node bench/store-updates.js [build ...] [--records 20000] [--updates 4000] [--rounds 4]
'use strict';
const { fork } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { parseArgs } = require('node:util');
const { median } = require('./lib');

const ROOT = path.resolve(__dirname, '..');
const IN_FLIGHT = 20;
const SHAPES = ['claim', 'outcome'];

/** A QUEUED message record as the accepting use case stores it. */
function record(i, accountId) {
  const now = new Date(Date.now() - i * 1000);
  return {
    _id: crypto.randomUUID(), accountId, kind: 'TRANSACTIONAL', templateName: 'receipt', email: `reader${i}@example.org`, subscriberId: null, topicId: null,
    senderProfileId: 'p1', fromEmail: 'shop@example.com', fromName: 'Shop', replyTo: null, subject: `Receipt ${i}`, links: ['https://shop.example.com/orders/1'],
    tracking: { opens: true, clicks: true }, status: 'QUEUED', suppressionReason: null, history: [{ status: 'QUEUED', at: now }], attempts: [], nextAttemptAt: null,
    createdAt: now, sentAt: null, deliveredAt: null, bouncedAt: null, complainedAt: null, bounce: null, openCount: 0, firstOpenedAt: null, machineOpenCount: 0,
    clickCount: 0, firstClickedAt: null, machineClickCount: 0, eventProperties: { orderId: `o-${i}`, total: 42.5 }, dedupeKey: `order-${i}`,
  };
}

/** The update of one shape for the n-th update of a round. */
function update(shape, n) {
  const at = new Date();
  if (shape === 'claim') return { $set: { sending: { token: `t-${n}`, by: 'worker-1', at, until: new Date(at.getTime() + 60_000) } } };
  return { $set: { status: 'DELIVERED', deliveredAt: at, sending: null } };
}

// ---- a child: one build (or the floor), its own store ----

async function child(build, records) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-store-updates-'));
  const accountId = 'acc-1';
  const docs = Array.from({ length: records }, (_, i) => record(i, i % 10 === 0 ? 'acc-2' : accountId));
  const ids = docs.filter((d) => d.accountId === accountId).map((d) => d._id);
  let run;
  let close;
  if (build === 'floor') {
    const { DatabaseSync } = require('node:sqlite');
    const db = new DatabaseSync(path.join(dir, 'floor.sqlite'));
    db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL');
    db.exec('CREATE TABLE messages (rid INTEGER PRIMARY KEY, _id TEXT NOT NULL UNIQUE, doc TEXT NOT NULL)');
    const byId = new Map(docs.map((d) => [d._id, d]));
    const insert = db.prepare('INSERT INTO messages (_id, doc) VALUES (?, ?)');
    db.exec('BEGIN');
    for (const d of docs) insert.run(d._id, JSON.stringify(d));
    db.exec('COMMIT');
    const rewrite = db.prepare('UPDATE messages SET doc = ? WHERE _id = ?');
    // the same writes, committed IN_FLIGHT at a time: the document changed and encoded, the row rewritten
    run = async (shape, count) => {
      for (let n = 0; n < count; n += IN_FLIGHT) {
        db.exec('BEGIN');
        for (let k = n; k < Math.min(count, n + IN_FLIGHT); k++) {
          const doc = byId.get(ids[k % ids.length]);
          Object.assign(doc, update(shape, k).$set);
          rewrite.run(JSON.stringify(doc), doc._id);
        }
        db.exec('COMMIT');
        await new Promise(setImmediate);
      }
    };
    close = async () => db.close();
  } else {
    const { openStore } = require(path.resolve(ROOT, build));
    const { messageCollections } = require(path.join(ROOT, 'services/messaging/dist/mail/store/messages'));
    // the messaging service's own collection definition, opened on this build's store
    const store = await openStore({ dataDir: dir });
    let definition;
    messageCollections({ collection: (name, schema, options) => ((definition ??= { name, schema, options }), {}) });
    const messages = store.collection(definition.name, definition.schema, definition.options);
    for (let i = 0; i < docs.length; i += 1000) await store.transaction((tx) => messages.insertMany(docs.slice(i, i + 1000), { tx }));
    run = async (shape, count) => {
      let next = 0;
      await Promise.all(
        Array.from({ length: IN_FLIGHT }, async () => {
          while (next < count) {
            const n = next++;
            const r = await messages.updateOne({ _id: ids[n % ids.length], accountId }, update(shape, n));
            if (r.matchedCount !== 1) throw new Error(`update ${n} matched ${r.matchedCount}`);
          }
        }),
      );
    };
    close = () => store.close();
  }
  process.on('message', async (msg) => {
    if (msg.stop) {
      await close();
      fs.rmSync(dir, { recursive: true, force: true });
      process.exit(0);
    }
    const before = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    await run(msg.shape, msg.count);
    const cpu = process.cpuUsage(before);
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    process.send({ cpuUs: (cpu.user + cpu.system) / msg.count, perSecond: msg.count / seconds });
  });
  process.send({ ready: true });
}

// ---- the parent: interleaved rounds ----

/** Sends a message to a bench process and waits for its answer. */
function ask(worker, msg) {
  return new Promise((resolve, reject) => {
    const exited = (code) => reject(new Error(`a bench process exited (${code})`));
    worker.once('exit', exited);
    worker.once('message', (answer) => {
      worker.off('exit', exited);
      resolve(answer);
    });
    if (msg) worker.send(msg);
  });
}
const load = () => os.loadavg().map((x) => x.toFixed(1)).join(' ');

async function main() {
  const { values: args, positionals } = parseArgs({
    allowPositionals: true,
    options: { records: { type: 'string', default: '20000' }, updates: { type: 'string', default: '4000' }, rounds: { type: 'string', default: '4' }, child: { type: 'string' } },
  });
  if (args.child) return child(args.child, Number(args.records));
  const builds = positionals.length ? positionals : ['packages/store/dist'];
  const runs = [...builds, 'floor'];
  const count = Number(args.updates);
  console.log(`store-updates: ${args.records} message records, ${count} updates per shape and round, ${IN_FLIGHT} in flight; load average ${load()}`);
  const workers = [];
  try {
    for (const build of runs) {
      const worker = fork(__filename, ['--child', build, '--records', args.records], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
      workers.push(worker);
      await ask(worker); // ready: its records stored
    }
    const results = runs.map(() => Object.fromEntries(SHAPES.map((s) => [s, []])));
    for (let round = 0; round <= Number(args.rounds); round++) {
      for (const shape of SHAPES) {
        for (let i = 0; i < runs.length; i++) {
          const r = await ask(workers[i], { shape, count });
          if (round > 0) results[i][shape].push(r); // round 0 warms up
        }
      }
      if (round > 0) console.log(`round ${round}: ${runs.map((b, i) => `${b} ${SHAPES.map((s) => `${s} ${results[i][s].at(-1).cpuUs.toFixed(0)}`).join(' ')} µs`).join(' | ')}; load ${load()}`);
    }
    console.log('\nCPU µs per update (median of rounds, min-max) and updates/s (median):');
    for (const shape of SHAPES) {
      const floor = median(results[runs.length - 1][shape].map((r) => r.cpuUs));
      const first = median(results[0][shape].map((r) => r.cpuUs));
      for (let i = 0; i < runs.length; i++) {
        const us = results[i][shape].map((r) => r.cpuUs);
        const m = median(us);
        const ratios = i === runs.length - 1 ? '' : `; ${(m / floor).toFixed(1)}x SQLite alone${i > 0 ? `; ${(m / first).toFixed(2)}x ${runs[0]}` : ''}`;
        console.log(`  ${shape.padEnd(8)} ${runs[i].padEnd(40)} ${m.toFixed(1).padStart(7)} µs (${Math.min(...us).toFixed(1)}-${Math.max(...us).toFixed(1)}), ${Math.round(median(results[i][shape].map((r) => r.perSecond)))}/s${ratios}`);
      }
    }
    console.log(`load average at the end: ${load()}`);
  } finally {
    for (const worker of workers) if (worker.connected) worker.send({ stop: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
