#!/usr/bin/env node
// bench/webhooks (issues 14, 26): deliveries per second and webhook-service CPU per delivery, from facts on
// DOMAIN to 10 local receivers (fan-out -> deliveries + jobs -> delivery worker -> standardwebhooks
// signature -> @mailer/outbound -> settled), against undici posting pre-signed bodies to the same
// receivers. Targets: ratio >= 0.25, <= 100 µs service CPU per delivery, and the 9 healthy receivers
// keep >= 0.9 of their rate while the 10th hangs.
//
// Like with like: the receivers run in a process of their own, the undici baseline in another, the
// service in its own (as deployed); none shares an event loop with another or with this driver. Each
// part is warmed first, then the rounds interleave: A (undici), B (service, all receivers answer),
// C (service, receiver 0 holds every request and never answers, so its attempts run into the 15 s
// timeout and retry), A, B, C, ... The one service process stays up (warm) across rounds; each of its
// rounds publishes its facts to DOMAIN (one `*` subscription per account, 10 accounts, one delivery per
// fact, round-robin). After a C round receiver 0 answers again and the bench waits until it has its
// share, so no round inherits another's backlog. The service runs with retries every 5 s (instead of the
// schedule's 5 min after the second failure), so the hanging subscription keeps retrying all round.
// Rates are counted at the receivers (first to last arrival); CPU from /proc per process.
// Usage: npm run bench:webhooks [-- --facts 20000 --rounds 3]
'use strict';
const { parseArgs } = require('node:util');
const { fork } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const RECEIVERS = 10;
const IN_FLIGHT = 8; // per receiver: the service's WEBHOOK_SUBSCRIPTION_IN_FLIGHT default

/**
 * The receivers' process: RECEIVERS HTTP servers answering 204 (or, in `hang` mode, holding the
 * request). Over IPC: `stats` (per receiver since the last reset: requests, first and last arrival,
 * distinct webhook-ids answered 204),
 * `reset`, `mode` (hang or answer; leaving hang answers the held requests).
 */
function receiversProcess() {
  const http = require('node:http');
  const receivers = Array.from({ length: RECEIVERS }, () => ({ count: 0, first: 0, last: 0, answered: new Set(), hang: false, held: [] }));
  const answer = (r, req, res) => {
    res.writeHead(204).end();
    r.answered.add(req.headers['webhook-id']);
  };
  const servers = receivers.map((r) =>
    http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const now = performance.timeOrigin + performance.now();
        if (r.count++ === 0) r.first = now;
        r.last = now;
        if (r.hang) r.held.push([req, res]);
        else answer(r, req, res);
      });
    }),
  );
  Promise.all(servers.map((s) => ((s.keepAliveTimeout = 60_000), new Promise((resolve) => s.listen(0, '127.0.0.1', resolve))))).then(() =>
    process.send({ urls: servers.map((s) => `http://127.0.0.1:${s.address().port}/hook`) }),
  );
  process.on('message', (m) => {
    if (m.cmd === 'reset') for (const r of receivers) Object.assign(r, { count: 0, first: 0, last: 0, answered: new Set() });
    if (m.cmd === 'mode') {
      const r = receivers[m.index];
      r.hang = m.hang;
      // A held request whose attempt timed out has lost its connection: that delivery is retried.
      if (!m.hang) for (const [req, res] of r.held.splice(0)) if (!res.destroyed) answer(r, req, res);
    }
    process.send({ id: m.id, stats: receivers.map(({ count, first, last, answered }) => ({ count, first, last, answered: answered.size })) });
  });
}

/** The baseline's process: one undici Agent, IN_FLIGHT posts per receiver, pre-signed bodies. */
function undiciProcess() {
  const { Agent, request } = require('undici');
  const { Webhook } = require('standardwebhooks');
  const agent = new Agent({ connections: IN_FLIGHT, keepAliveTimeout: 10_000 });
  const wh = new Webhook(`whsec_${crypto.randomBytes(32).toString('base64')}`);
  const prepared = Array.from({ length: 200 }, (_, i) => {
    const id = crypto.randomUUID();
    const body = JSON.stringify({ id, type: 'subscriber.created', createdAt: new Date().toISOString(), data: subscriberFact('acc', i).subscriber });
    const now = new Date();
    return { body, headers: { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': String(Math.floor(now / 1000)), 'webhook-signature': wh.sign(id, now, body) } };
  });
  process.on('message', async ({ id, urls, n }) => {
    const perReceiver = Math.ceil(n / urls.length);
    await Promise.all(urls.map(async (url) => {
      let sent = 0;
      const worker = async () => {
        while (sent < perReceiver) {
          const p = prepared[sent++ % prepared.length];
          const res = await request(url, { method: 'POST', headers: p.headers, body: p.body, dispatcher: agent });
          await res.body.dump();
        }
      };
      await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    }));
    process.send({ id });
  });
  process.send({ ready: true });
}

function subscriberFact(accountId, i) {
  const now = new Date().toISOString();
  return {
    type: 'subscriber.created', accountId, occurredAt: now, version: 1,
    subscriber: { id: crypto.randomUUID(), email: `s${i}@example.org`, firstName: 'Ann', subscriberStatus: 'ACTIVE', registeredAt: now, tags: [], topicIds: [], optOuts: [], fields: [] },
  };
}

/** A forked child of this file in `role`, with a request/answer helper over IPC. */
async function child(childRole, env = {}) {
  const proc = fork(__filename, [], { env: { ...process.env, ...env, BENCH_WEBHOOKS_ROLE: childRole }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const first = await new Promise((resolve, reject) => {
    proc.once('message', resolve);
    proc.once('exit', (code) => reject(new Error(`${childRole} exited (${code}) before it was ready`)));
  });
  let seq = 0;
  const ask = (msg) =>
    new Promise((resolve) => {
      const id = ++seq;
      const onMessage = (m) => m.id === id && (proc.off('message', onMessage), resolve(m));
      proc.on('message', onMessage);
      proc.send({ ...msg, id });
    });
  return { proc, first, ask, stop: () => new Promise((resolve) => (proc.exitCode !== null ? resolve() : (proc.once('exit', resolve), proc.kill()))) };
}

/** Arrivals per second between the first and the last arrival (0 with fewer than 2). */
const rateOf = ({ count, first, last }) => (count < 2 ? 0 : ((count - 1) * 1000) / Math.max(1, last - first));
const rateOfAll = (stats) => {
  const count = stats.reduce((n, s) => n + s.count, 0);
  const active = stats.filter((s) => s.count > 0);
  return rateOf({ count, first: Math.min(...active.map((s) => s.first)), last: Math.max(...active.map((s) => s.last)) });
};
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const load = () => os.loadavg().map((l) => l.toFixed(1)).join(' ');

async function main() {
  const { values: args } = parseArgs({ options: { facts: { type: 'string', default: '20000' }, rounds: { type: 'string', default: '3' } } });
  const FACTS = Math.ceil(Number(args.facts) / RECEIVERS) * RECEIVERS;
  const ROUNDS = Number(args.rounds);
  const { connect } = require('nats');
  const { startNatsServer, startService, operatorAuth } = require('@mailer/testing');
  const { openStore } = require('@mailer/store');
  const { ensureStreams, publish } = require('@mailer/nats');
  const { secretKeyring, subscriptionRepository } = require('../services/webhook/dist/store/subscriptions');
  const { verdict, rssMb, cpuSeconds } = require('./lib');

  const stops = [];
  try {
    console.log(`load average at start: ${load()}`);
    const nats = await startNatsServer();
    stops.push(() => nats.stop());
    const receivers = await child('receivers');
    stops.push(receivers.stop);
    const urls = receivers.first.urls;
    const undici = await child('undici');
    stops.push(undici.stop);
    const stats = async () => (await receivers.ask({ cmd: 'stats' })).stats;
    const until = async (what, done, timeoutMs = 30 * 60_000) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const s = await stats();
        if (done(s)) return s;
        if (Date.now() > deadline) throw new Error(`${what}: not done in time (${s.map((r) => r.count).join(',')})`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };

    // The service: one `*` subscription per account, one account per receiver, seeded in its store.
    const SECRET_SEALING_KEY = crypto.randomBytes(32).toString('base64');
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailer-bench-webhooks-'));
    stops.push(async () => fs.rmSync(dataDir, { recursive: true, force: true }));
    const accounts = urls.map(() => crypto.randomUUID());
    const store = await openStore({ dataDir: path.join(dataDir, 'webhook') });
    const repo = subscriptionRepository(store, secretKeyring(Buffer.from(SECRET_SEALING_KEY, 'base64')));
    const secret = `whsec_${crypto.randomBytes(32).toString('base64')}`;
    for (const [i, url] of urls.entries()) {
      const now = new Date();
      await repo.create({ id: crypto.randomUUID(), accountId: accounts[i], targetUrl: url, event: '*', deliveryContentType: 'application/json', active: true, secret, previousSecret: null, previousSecretExpiresAt: null, disabledReason: null, createdAt: now, updatedAt: now, failingSince: null });
    }
    await store.close();
    const svc = await startService('webhook', {
      NATS_URL: nats.url, DATA_DIR: dataDir, LOG_LEVEL: 'info', SECRET_SEALING_KEY,
      OUTBOUND_ALLOW_HTTP: 'true', OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8,::1/128',
      WEBHOOK_RETRY_SCHEDULE_SECONDS: Array(10).fill('5').join(','),
      NODE_OPTIONS: '--max-old-space-size=2048',
    });
    // SIGTERM lets a --cpu-prof run write its profile.
    stops.push(() => svc.stop(process.env.NODE_EXEC_ARGS ? 'SIGTERM' : 'SIGKILL').catch(() => undefined));
    const nc = await connect({ servers: nats.url, ...operatorAuth });
    stops.push(() => nc.close());
    await ensureStreams(nc);
    const js = nc.jetstream();

    /** One baseline round: n posts; rate at the receivers, CPU of the undici process per post. */
    const baseline = async (n) => {
      await receivers.ask({ cmd: 'reset' });
      const cpu = cpuSeconds(undici.proc.pid);
      await undici.ask({ urls, n });
      const s = await stats();
      return { rate: rateOfAll(s), cpuUs: ((cpuSeconds(undici.proc.pid) - cpu) * 1e6) / s.reduce((a, r) => a + r.count, 0) };
    };
    /** One service round: n facts published; done when every answering receiver has its share. */
    let factNo = 0;
    const serviceRound = async (n, hang) => {
      await receivers.ask({ cmd: 'reset' });
      if (hang) await receivers.ask({ cmd: 'mode', index: 0, hang: true });
      const cpu = cpuSeconds(svc.pid);
      const published = Date.now();
      for (let i = 0; i < n; i += 1000) {
        await Promise.all(Array.from({ length: Math.min(1000, n - i) }, (_, k) => publish(js, 'domain.subscriber.created', subscriberFact(accounts[(i + k) % RECEIVERS], factNo++))));
      }
      const publishS = (Date.now() - published) / 1000;
      const share = n / RECEIVERS;
      const s = await until(hang ? 'the 9 answering receivers' : 'every receiver', (st) => st.every((r, i) => (hang && i === 0) || r.count >= share));
      const cpuUs = ((cpuSeconds(svc.pid) - cpu) * 1e6) / (hang ? share * (RECEIVERS - 1) : n);
      const result = { rate: rateOfAll(hang ? s.slice(1) : s), nine: s.slice(1).reduce((a, r) => a + rateOf(r), 0), cpuUs, publishS, wall: (Date.now() - published) / 1000 };
      if (hang) {
        // Receiver 0 answers again; its share is delivered before the next round starts.
        await receivers.ask({ cmd: 'mode', index: 0, hang: false });
        await until('receiver 0 after its hang', (st) => st[0].answered >= share, 10 * 60_000);
      }
      return result;
    };

    // Warm-up: each part once, not counted.
    await baseline(2000);
    await serviceRound(2000, false);

    const rounds = [];
    for (let r = 1; r <= ROUNDS; r++) {
      const a = await baseline(FACTS);
      const b = await serviceRound(FACTS, false);
      const c = await serviceRound(FACTS, true);
      rounds.push({ a, b, c });
      console.log(
        `round ${r} (load ${load()}): undici ${a.rate.toFixed(0)}/s (${a.cpuUs.toFixed(0)} µs CPU/post) | service ${b.rate.toFixed(0)}/s ` +
          `(${b.cpuUs.toFixed(0)} µs CPU/delivery; facts published in ${b.publishS.toFixed(1)} s) -> ratio ${(b.rate / a.rate).toFixed(3)} | ` +
          `receiver 0 hanging: the other 9 at ${c.nine.toFixed(0)}/s vs ${b.nine.toFixed(0)}/s -> ${(c.nine / b.nine).toFixed(2)} (${c.cpuUs.toFixed(0)} µs CPU/delivery)`,
      );
    }
    const mem = rssMb(svc.pid);
    const ratio = median(rounds.map(({ a, b }) => b.rate / a.rate));
    const cpuUs = median(rounds.map(({ b }) => b.cpuUs));
    const keep = median(rounds.map(({ b, c }) => c.nine / b.nine));
    console.log(`facts per round: ${FACTS} (one delivery each) to ${RECEIVERS} receivers, ${IN_FLIGHT} in flight per subscription; ${ROUNDS} rounds A/B/C; load average at end: ${load()}`);
    console.log(`undici (pre-signed bodies): median ${median(rounds.map(({ a }) => a.rate)).toFixed(0)} posts/s, ${median(rounds.map(({ a }) => a.cpuUs)).toFixed(0)} µs CPU per post`);
    console.log(`webhook service: median ${median(rounds.map(({ b }) => b.rate)).toFixed(0)} deliveries/s, ${cpuUs.toFixed(0)} µs CPU per delivery, RSS ${mem.rss} MB (peak ${mem.peak} MB)`);
    console.log(`ratio (median of the rounds' ratios): ${ratio.toFixed(3)} (target >= 0.25) ${verdict(ratio >= 0.25)}; CPU per delivery (target <= 100 µs) ${verdict(cpuUs <= 100)}`);
    console.log(`9 answering receivers while receiver 0 hangs: ${keep.toFixed(2)} of their rate (target >= 0.9) ${verdict(keep >= 0.9)}`);
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  }
}

const role = process.env.BENCH_WEBHOOKS_ROLE;
if (role === 'receivers') receiversProcess();
else if (role === 'undici') undiciProcess();
else main().catch((err) => {
  console.error(err);
  process.exit(1);
});
