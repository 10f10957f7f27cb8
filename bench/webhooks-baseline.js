#!/usr/bin/env node
// The baseline half of bench/webhooks.js (issue 14 "Performance"): ONE process posting the same
// Standard-Webhooks-signed bodies the webhook service sends, with undici (keep-alive, N in flight per
// receiver), to the same 10 local receivers (bench/webhook-receivers.js, a process of their own). The
// service's deliveries per second are divided by this rate (target >= 0.5).
//
// As a library (bench/webhooks.js):
//   const { startReceivers, runBaseline, receiverRate, totalRate } = require('./webhooks-baseline');
//   const rx = await startReceivers({ count: 10, secret, timingOut: [9] }); // {urls, pid, stats(), reset(), stop()}
//   const base = await runBaseline({ urls: rx.urls.slice(0, 10), deliveries: 20000, inFlightPerTarget: 8, secret });
//   // base: {deliveries, ok, failed, seconds, rate, cpuUsPerDelivery}; rates at the receivers: totalRate(await rx.stats())
// Standalone: node bench/webhooks-baseline.js [--deliveries 20000 --in-flight 8]
//   prints plain undici and the same posting through @mailer/outbound (the guard's own cost).
'use strict';
const crypto = require('node:crypto');
const path = require('node:path');
const { fork } = require('node:child_process');
const { parseArgs } = require('node:util');

const root = path.join(__dirname, '..');

/** A body like the service's: {id, type, createdAt, data} with a subscriber record (~0.6 KB). */
function factBody(i) {
  const id = crypto.randomUUID();
  return JSON.stringify({
    id: `evt_${id}`,
    type: 'subscriber.created',
    createdAt: new Date().toISOString(),
    data: {
      id,
      email: `reader${i}@example.org`,
      status: 'ACTIVE',
      firstName: 'Reader',
      lastName: `Number ${i}`,
      fields: { company: 'Example Ltd', plan: 'pro', city: 'Lisbon' },
      tagIds: [crypto.randomUUID(), crypto.randomUUID()],
      topicIds: [crypto.randomUUID()],
      source: 'API',
      createdAt: new Date().toISOString(),
      updatedAt: new Date().toISOString(),
    },
  });
}

/** Standard Webhooks headers for one body (what the standardwebhooks package's sign() produces). */
function signedHeaders(key, msgId, body) {
  const timestamp = Math.floor(Date.now() / 1000);
  const sig = crypto.createHmac('sha256', key).update(`${msgId}.${timestamp}.${body}`).digest('base64');
  return { 'content-type': 'application/json', 'webhook-id': msgId, 'webhook-timestamp': String(timestamp), 'webhook-signature': `v1,${sig}` };
}

const newSecret = () => `whsec_${crypto.randomBytes(32).toString('base64')}`;

/** Receivers in their own process: {urls, pid, stats(), reset(), stop()}. */
async function startReceivers(opts = {}) {
  const child = fork(path.join(__dirname, 'webhook-receivers.js'), [JSON.stringify(opts)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const ask = (cmd, key) =>
    new Promise((resolve) => {
      const on = (msg) => msg[key] !== undefined && (child.off('message', on), resolve(msg[key]));
      child.on('message', on);
      child.send({ cmd });
    });
  const { ports } = await new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`receivers exited (${code}) before listening`)));
  });
  return {
    urls: ports.map((p) => `http://127.0.0.1:${p}/hooks`),
    pid: child.pid,
    stats: () => ask('stats', 'stats'),
    reset: () => ask('reset', 'reset'),
    stop: () => new Promise((resolve) => (child.exitCode !== null ? resolve() : (child.once('exit', resolve), child.disconnect()))),
  };
}

/** Deliveries per second at one receiver, first to last arrival. */
const receiverRate = (s) => (s.count < 2 ? 0 : Math.round(((s.count - 1) * 1000) / Math.max(1, s.last - s.first)));
/** Deliveries per second over all receivers that got any, first arrival anywhere to last anywhere. */
function totalRate(stats) {
  const got = stats.filter((s) => s.count > 0);
  if (got.length === 0) return 0;
  const first = Math.min(...got.map((s) => s.first));
  const last = Math.max(...got.map((s) => s.last));
  const n = got.reduce((a, s) => a + s.count, 0);
  return Math.round(((n - 1) * 1000) / Math.max(1, last - first));
}

/** Runs the poster in a process of its own and returns its figures. */
function runBaseline(opts) {
  const child = fork(__filename, ['--child', JSON.stringify(opts)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    child.once('message', (msg) => (msg.error ? reject(new Error(msg.error)) : resolve(msg)));
    child.once('exit', (code) => code !== 0 && reject(new Error(`baseline poster exited (${code})`)));
  });
}

/** The poster: `deliveries` bodies spread round-robin over `urls`, `inFlightPerTarget` each. */
async function poster({ urls, deliveries = 20000, inFlightPerTarget = 8, secret = newSecret(), timeoutMs = 15_000, via = 'undici' }) {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const queues = urls.map(() => []);
  for (let i = 0; i < deliveries; i++) queues[i % urls.length].push(factBody(i));
  let post;
  let close;
  if (via === 'outbound') {
    const { createOutbound } = require(path.join(root, 'packages/outbound'));
    const outbound = createOutbound({ allowHttp: true, allowedCidrs: ['127.0.0.0/8'] }, { connectionsPerOrigin: inFlightPerTarget });
    post = async (url, headers, body) => (await outbound.request(url, { method: 'POST', headers, body, timeoutMs, maxResponseBytes: 2048 })).status;
    close = () => outbound.close();
  } else {
    // The undici the guard uses (packages/outbound's dependency), without the guard.
    const { Agent, request } = require(require.resolve('undici', { paths: [path.join(root, 'packages/outbound')] }));
    const agent = new Agent({ connections: inFlightPerTarget, keepAliveTimeout: 10_000 });
    post = async (url, headers, body) => {
      const res = await request(url, { dispatcher: agent, method: 'POST', headers, body, signal: AbortSignal.timeout(timeoutMs) });
      await res.body.dump();
      return res.statusCode;
    };
    close = () => agent.close();
  }
  let ok = 0;
  let failed = 0;
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  const worker = async (t) => {
    for (let body = queues[t].shift(); body !== undefined; body = queues[t].shift()) {
      try {
        const status = await post(urls[t], signedHeaders(key, `msg_${crypto.randomUUID()}`, body), body);
        if (status >= 200 && status < 300) ok++;
        else failed++;
      } catch {
        failed++;
      }
    }
  };
  await Promise.all(urls.flatMap((_u, t) => Array.from({ length: inFlightPerTarget }, () => worker(t))));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const used = process.cpuUsage(cpu);
  await close();
  return { deliveries, ok, failed, seconds, rate: Math.round(ok / seconds), cpuUsPerDelivery: Math.round((used.user + used.system) / Math.max(1, ok)), via };
}

async function standalone() {
  const { values: args } = parseArgs({ options: { deliveries: { type: 'string', default: '20000' }, 'in-flight': { type: 'string', default: '8' } } });
  const deliveries = Number(args.deliveries);
  const inFlightPerTarget = Number(args['in-flight']);
  const secret = newSecret();
  const rx = await startReceivers({ count: 10, secret });
  try {
    await runBaseline({ urls: rx.urls, deliveries: 2000, inFlightPerTarget, secret }); // warm-up
    for (const via of ['undici', 'outbound']) {
      await rx.reset();
      const r = await runBaseline({ urls: rx.urls, deliveries, inFlightPerTarget, secret, via });
      const stats = await rx.stats();
      const bad = stats.reduce((a, s) => a + s.badSignatures, 0);
      const verified = stats.reduce((a, s) => a + s.verified, 0);
      console.log(
        `${via.padEnd(8)}: ${r.ok} delivered (${r.failed} failed) in ${r.seconds.toFixed(1)} s = ${r.rate}/s at the poster, ${totalRate(stats)}/s at the receivers ` +
          `(per receiver ${Math.min(...stats.map(receiverRate))}..${Math.max(...stats.map(receiverRate))}/s); poster CPU ${r.cpuUsPerDelivery} µs/delivery; signatures checked ${verified}, bad ${bad}`,
      );
    }
  } finally {
    await rx.stop();
  }
}

if (process.argv[2] === '--child') {
  poster(JSON.parse(process.argv[3]))
    .then((r) => process.send(r, () => process.exit(0)))
    .catch((err) => process.send({ error: String(err?.stack ?? err) }, () => process.exit(1)));
} else if (require.main === module) {
  standalone().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}

module.exports = { startReceivers, runBaseline, receiverRate, totalRate, factBody, signedHeaders, newSecret };
