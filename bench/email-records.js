#!/usr/bin/env node
// bench/email-records (issue 11): the messaging service's memory with many stored message records.
// Real messages are sent and delivered first (NATS, subscriber, messaging, gateway, a local SMTP sink);
// their stored records (delivered: the body is gone, the record and its status history stay) are then
// copied into the service's store, with new ids, addresses and times, up to each checkpoint. At each
// checkpoint the real service is started on that store and measured: time until ready, RSS once ready, the latency and CPU of GET /email-messages pages (all, and by status) and single
// messages through the gateway, and RSS after them. The ratio is against the same service with only
// the sent records (the baseline of this run). The embedded store (SQLite) reads records from disk;
// at its first start on the copies the service also rolls up the report aggregates (one pass).
// Usage: npm run bench:email-records [-- --records 1000000]
'use strict';
const { parseArgs } = require('node:util');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { startNatsServer, startService, startGateway } = require('@mailer/testing');
const { openStore } = require('@mailer/store');
const { messageCollections } = require('../services/messaging/dist/mail/store/messages');
const { benchAccount, cpuSeconds, rssMb, startSmtpSink } = require('./lib');

const { values: args } = parseArgs({ options: { records: { type: 'string', default: '1000000' } } });
const RECORDS = Number(args.records);
const CHECKPOINTS = [0.1, 0.25, 0.5, 1].map((f) => Math.round(f * RECORDS));
const SENT = 50;
const DAY = 86_400_000;
const KEEP_DAYS = 365;


const dirBytes = (dir) => fs.readdirSync(dir, { withFileTypes: true }).reduce((sum, e) => sum + (e.isDirectory() ? dirBytes(path.join(dir, e.name)) : fs.statSync(path.join(dir, e.name)).size), 0);

/** A copy of a delivered record as another recipient's, `ageMs` older (every time member shifted). */
function copyOf(doc, i, ageMs) {
  const shift = (v) => (v instanceof Date ? new Date(v.getTime() - ageMs) : v);
  const copy = {};
  for (const [k, v] of Object.entries(doc)) copy[k] = Array.isArray(v) ? v.map((e) => (e && typeof e === 'object' && !(e instanceof Date) ? Object.fromEntries(Object.entries(e).map(([ek, ev]) => [ek, shift(ev)])) : shift(e))) : shift(v);
  return { ...copy, _id: crypto.randomUUID(), email: `r${i}@example.org` };
}

/** Starts the service on the store, measures load time, RSS and the read paths through the gateway. */
async function measureService(env, dataDir, gwEnv, account, ids) {
  const started = Date.now();
  // records up to 90 days old, all kept (MESSAGE_RETENTION_DAYS): the service holds every one
  const messaging = await startService('messaging', { ...env, DATA_DIR: dataDir, MESSAGE_RETENTION_DAYS: String(KEEP_DAYS) }, 600_000);
  const readyS = (Date.now() - started) / 1000;
  const rssReady = rssMb(messaging.pid).rss;
  const gw = await startGateway({ ...gwEnv, MESSAGING_GRPC_ADDR: messaging.address });
  const call = (url) => fetch(`${gw.url}${url}`, { headers: { 'x-api-key': account.apiKey } }).then(async (r) => {
    await r.arrayBuffer();
    if (r.status !== 200) throw new Error(`GET ${url} -> ${r.status}`);
  });
  const timed = async (urls) => {
    await call(urls[0]); // untimed: a fresh process's first request also pays for the connection and compilation
    const ms = [];
    for (const url of urls) {
      const t = performance.now();
      await call(url);
      ms.push(performance.now() - t);
    }
    ms.sort((a, b) => a - b);
    return { p50: ms[Math.floor(ms.length / 2)].toFixed(1), p99: ms[Math.floor(ms.length * 0.99)].toFixed(1) };
  };
  // CPU of the messaging process per request (the gateway's is the same whatever the store holds)
  const withCpu = async (urls) => {
    const before = cpuSeconds(messaging.pid);
    const figures = await timed(urls);
    return { ...figures, cpuUs: Math.round(((cpuSeconds(messaging.pid) - before) * 1e6) / urls.length) };
  };
  const pages = await withCpu(Array.from({ length: 100 }, (_, i) => `/email-messages?pageSize=50&pageNumber=${(i % 10) + 1}`));
  // every copy is DELIVERED: this page's total counts the whole account's entries of that status
  const byStatus = await withCpu(Array.from({ length: 20 }, (_, i) => `/email-messages?status=DELIVERED&pageSize=50&pageNumber=${(i % 10) + 1}`));
  const single = await withCpu(Array.from({ length: 200 }, (_, i) => `/email-messages/${ids[i % ids.length]}`));
  const rssAfter = rssMb(messaging.pid).rss;
  await gw.stop();
  await messaging.stop();
  return { readyS, rssReady, rssAfter, pages, byStatus, single };
}

async function main() {
  const stops = [];
  try {
    const nats = await startNatsServer();
    stops.push(() => nats.stop());
    const sink = await startSmtpSink();
    stops.push(() => sink.close());
    const subscriber = await startService('subscriber', { NATS_URL: nats.url });
    stops.push(() => subscriber.stop());
    const env = { NATS_URL: nats.url, SUBSCRIBER_GRPC_ADDR: subscriber.address, SMTP_URL: sink.url, MAIL_ACCOUNT_RATE_PER_SECOND: '100000' };
    const messaging = await startService('messaging', env);
    const dataDir = messaging.dataDir;
    const gwEnv = { NATS_URL: nats.url, SUBSCRIBER_GRPC_ADDR: subscriber.address };
    const gw = await startGateway({ ...gwEnv, MESSAGING_GRPC_ADDR: messaging.address });
    // Later gateways (pointed at the restarted service) must know the account's key the same way.
    Object.assign(gwEnv, { ADMIN_TOKEN: gw.adminToken, API_KEY_MASTER_KEY: gw.masterKey });
    const account = await benchAccount(gw, 'bench-email-records');
    await account.call('POST', '/sender-profiles', { name: 'Shop', fromEmail: 'shop@example.com', fromName: 'The Shop' });
    await account.call('POST', '/email-templates', { name: 'receipt', subject: 'Receipt {{ n }}', html: '<p>Receipt {{ n }}</p><a href="https://shop.example/r/{{ n }}">See it</a>' });
    const ids = [];
    for (let i = 0; i < SENT; i++) ids.push((await account.call('POST', '/email-messages', { name: 'receipt', email: `sent${i}@example.org`, substitutionData: { n: String(i) } })).messageId);
    for (const deadline = Date.now() + 60_000; ; ) {
      const { items } = await account.call('GET', `/email-messages?pageSize=${SENT}`);
      if (items.filter((m) => m.status === 'DELIVERED').length === SENT) break;
      if (Date.now() > deadline) throw new Error('the sent messages were not all DELIVERED within 60 s');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await gw.stop();
    await messaging.stop();

    const rows = { [`${SENT} sent (baseline)`]: await measureService(env, dataDir, gwEnv, account, ids) };
    const storeDir = path.join(dataDir, 'messaging');
    let stored = 0;
    for (const target of CHECKPOINTS) {
      const store = await openStore({ dataDir: storeDir });
      const { messages } = messageCollections(store, { messageDays: KEEP_DAYS, reportDays: 730 });
      const sent = await messages.find({ _id: { $in: ids } });
      const t = Date.now();
      while (stored < target) {
        const n = Math.min(10_000, target - stored);
        await messages.insertMany(Array.from({ length: n }, (_, k) => copyOf(sent[(stored + k) % sent.length], stored + k, ((stored + k) % 90) * DAY)));
        stored += n;
      }
      await store.close();
      const insertS = (Date.now() - t) / 1000;
      rows[`${target.toLocaleString('en-US')} copies`] = { ...(await measureService(env, dataDir, gwEnv, account, ids)), 'store MB': Math.round(dirBytes(storeDir) / 1e6), 'insert s': insertS };
      console.log(`${target} records: ${JSON.stringify(rows[`${target.toLocaleString('en-US')} copies`])}`);
    }
    const table = Object.fromEntries(Object.entries(rows).map(([k, r]) => [k, {
      'ready s': r.readyS.toFixed(1), 'RSS ready MB': r.rssReady, 'RSS after reads MB': r.rssAfter, 'page p50/p99 ms': `${r.pages.p50}/${r.pages.p99}`, 'page CPU µs': r.pages.cpuUs, 'by status p50/p99 ms': `${r.byStatus.p50}/${r.byStatus.p99}`, 'by status CPU µs': r.byStatus.cpuUs, 'one p50/p99 ms': `${r.single.p50}/${r.single.p99}`, 'one CPU µs': r.single.cpuUs, 'store MB': r['store MB'] ?? '',
    }]));
    console.log(`\nbench/email-records: messaging service with stored message records (embedded store)`);
    console.table(table);
    const base = rows[`${SENT} sent (baseline)`];
    const last = rows[`${RECORDS.toLocaleString('en-US')} copies`];
    console.log(`RSS with ${RECORDS.toLocaleString('en-US')} records: ${last.rssAfter} MB = ${(last.rssAfter / base.rssAfter).toFixed(1)}x the baseline's ${base.rssAfter} MB; ${Math.round(((last.rssAfter - base.rssAfter) * 1e6) / RECORDS)} bytes per record`);
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
