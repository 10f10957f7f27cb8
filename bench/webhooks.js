#!/usr/bin/env node
// bench/webhooks (issue 14 "Performance"): deliveries per second from a backlog of facts to 10 local
// receivers through the webhook service (fan-out consumer on DOMAIN -> delivery + job through the outbox
// -> delivery worker -> standardwebhooks signature -> @mailer/outbound -> DELIVERED), beside this process
// posting the same signed bodies with undici to the same receivers in the same run. Target: ratio >= 0.5.
// Then the same again with one of the 10 receivers never answering (each attempt runs into the 15 s
// timeout): the other 9 must keep >= 0.9 of their rate.
// The facts are spread over 10 accounts with one `*` subscription each (one delivery per fact), written
// straight to the service's store before it starts; the whole backlog is on DOMAIN before it starts.
// Usage: npm run bench:webhooks [-- --facts 100000 --raw 20000]
'use strict';
const { parseArgs } = require('node:util');
const crypto = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { connect } = require('nats');
const { Agent, request } = require('undici');
const { Webhook } = require('standardwebhooks');
const { freePort, startNatsServer, startService, operatorAuth } = require('@mailer/testing');
const { openStore } = require('@mailer/store');
const { ensureStreams, publish } = require('@mailer/nats');
const { secretKeyring, subscriptionRepository } = require('../services/webhook/dist/store/subscriptions');
// The seeded secrets are sealed under the key the service is started with.
const SECRET_SEALING_KEY = crypto.randomBytes(32).toString('base64');
const { verdict, rssMb, cpuSeconds } = require('./lib');

const { values: args } = parseArgs({ options: { facts: { type: 'string', default: '100000' }, raw: { type: 'string', default: '20000' } } });
const FACTS = Number(args.facts);
const RAW = Number(args.raw);
const RECEIVERS = 10;
const IN_FLIGHT = 8; // per receiver, as the service's WEBHOOK_SUBSCRIPTION_IN_FLIGHT default

/** A receiver that answers 204 at once (or never, `hang`) and records arrival times. */
async function startReceiver(hang = false) {
  const times = [];
  const server = http.createServer((req, res) => {
    req.on('data', () => undefined);
    req.on('end', () => {
      times.push(Date.now());
      if (!hang) res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}/hook`, times, close: () => (server.closeAllConnections(), new Promise((r) => server.close(r))) };
}

/** Deliveries per second between the first and the last arrival. */
const rateOf = (times) => (times.length < 2 ? 0 : Math.round(((times.length - 1) * 1000) / Math.max(1, times[times.length - 1] - times[0])));
const rateOfAll = (receivers) => rateOf(receivers.flatMap((r) => r.times).sort((a, b) => a - b));

function subscriberFact(accountId, i) {
  const now = new Date().toISOString();
  return {
    type: 'subscriber.created', accountId, occurredAt: now, version: 1,
    subscriber: { id: crypto.randomUUID(), email: `s${i}@example.org`, firstName: 'Ann', subscriberStatus: 'ACTIVE', registeredAt: now, tags: [], topicIds: [], optOuts: [], fields: [] },
  };
}

/** The baseline: pre-signed bodies posted with one undici Agent, IN_FLIGHT per receiver. */
async function rawUndici(receivers, n, secret) {
  const agent = new Agent({ connections: IN_FLIGHT, keepAliveTimeout: 10_000 });
  const wh = new Webhook(secret);
  const perReceiver = Math.ceil(n / receivers.length);
  const prepared = Array.from({ length: 200 }, (_, i) => {
    const id = crypto.randomUUID();
    const body = JSON.stringify({ id, type: 'subscriber.created', createdAt: new Date().toISOString(), data: subscriberFact('acc', i).subscriber });
    const now = new Date();
    return { body, headers: { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': String(Math.floor(now / 1000)), 'webhook-signature': wh.sign(id, now, body) } };
  });
  await Promise.all(receivers.map(async (r) => {
    let sent = 0;
    const worker = async () => {
      while (sent < perReceiver) {
        const p = prepared[sent++ % prepared.length];
        const res = await request(r.url, { method: 'POST', headers: p.headers, body: p.body, dispatcher: agent });
        await res.body.dump();
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  }));
  await agent.close();
}

/** One run: seed subscriptions, publish the backlog, start the service, wait until every healthy receiver has its share. */
async function serviceRun(nats, receivers, hangIndex) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailer-bench-webhooks-'));
  const accounts = receivers.map(() => crypto.randomUUID());
  const secret = `whsec_${crypto.randomBytes(32).toString('base64')}`;
  const store = await openStore({ dataDir: path.join(dataDir, 'webhook') });
  const repo = subscriptionRepository(store, secretKeyring(Buffer.from(SECRET_SEALING_KEY, 'base64')));
  for (const [i, r] of receivers.entries()) {
    const now = new Date();
    await repo.create({ id: crypto.randomUUID(), accountId: accounts[i], targetUrl: r.url, event: '*', deliveryContentType: 'application/json', active: true, secret, previousSecret: null, previousSecretExpiresAt: null, disabledReason: null, createdAt: now, updatedAt: now, failingSince: null });
  }
  await store.close();
  // The backlog, spread round-robin over the accounts (one delivery per fact).
  const nc = await connect({ servers: nats.url, ...operatorAuth });
  await ensureStreams(nc);
  const js = nc.jetstream();
  for (let i = 0; i < FACTS; i += 1000) {
    await Promise.all(Array.from({ length: Math.min(1000, FACTS - i) }, (_, k) => {
      const fact = subscriberFact(accounts[(i + k) % RECEIVERS], i + k);
      return publish(js, 'domain.subscriber.created', fact);
    }));
  }
  await nc.close();
  const expectPer = Math.floor(FACTS / RECEIVERS);
  const started = Date.now();
  const svc = await startService('webhook', {
    NATS_URL: nats.url, DATA_DIR: dataDir, LOG_LEVEL: 'info', SECRET_SEALING_KEY,
    OUTBOUND_ALLOW_HTTP: 'true', OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8,::1/128',
    NODE_OPTIONS: '--max-old-space-size=1024',
  });
  const cpuBefore = cpuSeconds(svc.pid);
  const healthy = receivers.filter((_, i) => i !== hangIndex);
  while (healthy.some((r) => r.times.length < expectPer)) {
    if (Date.now() - started > 30 * 60_000) throw new Error(`not done after 30 min: ${healthy.map((r) => r.times.length).join(',')}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  const cpu = cpuSeconds(svc.pid) - cpuBefore;
  const mem = rssMb(svc.pid);
  await svc.stop(process.env.NODE_EXEC_ARGS ? 'SIGTERM' : 'SIGKILL').catch(() => undefined); // SIGTERM lets a --cpu-prof run write its profile
  fs.rmSync(dataDir, { recursive: true, force: true });
  return { rate: rateOfAll(healthy), perReceiver: healthy.map((r) => rateOf(r.times)), cpuUsPerDelivery: Math.round((cpu * 1e6) / (expectPer * healthy.length)), mem, wall: (Date.now() - started) / 1000 };
}

async function main() {
  const stops = [];
  try {
    const nats = await startNatsServer();
    stops.push(() => nats.stop());
    const receivers = await Promise.all(Array.from({ length: RECEIVERS }, () => startReceiver()));
    stops.push(() => Promise.all(receivers.map((r) => r.close())));
    const secret = `whsec_${crypto.randomBytes(32).toString('base64')}`;

    await rawUndici(receivers, 2000, secret); // warm-up
    receivers.forEach((r) => (r.times.length = 0));
    await rawUndici(receivers, RAW, secret);
    const raw = rateOfAll(receivers);
    receivers.forEach((r) => (r.times.length = 0));

    const all = await serviceRun(nats, receivers, -1);
    const nine = all.perReceiver.slice(1).reduce((a, b) => a + b, 0);
    receivers.forEach((r) => (r.times.length = 0));

    // Receiver 0 now never answers: its attempts time out (15 s) and retry; the 9 others are measured.
    const hanging = await startReceiver(true);
    stops.push(() => hanging.close());
    const withDead = await serviceRun(nats, [hanging, ...receivers.slice(1)], 0);
    const nineWithDead = withDead.perReceiver.reduce((a, b) => a + b, 0);

    const ratio = all.rate / raw;
    const keep = nineWithDead / nine;
    console.log(`facts: ${FACTS} (one delivery each) to ${RECEIVERS} receivers, ${IN_FLIGHT} in flight per subscription; raw posts: ${RAW}`);
    console.log(`raw undici (pre-signed bodies, ${IN_FLIGHT} per receiver): ${raw} deliveries/s`);
    console.log(`webhook service: ${all.rate} deliveries/s (CPU ${all.cpuUsPerDelivery} µs/delivery, RSS ${all.mem.rss} MB, peak ${all.mem.peak} MB, ${all.wall.toFixed(0)} s from start)`);
    console.log(`ratio: ${ratio.toFixed(2)} (target >= 0.5) ${verdict(ratio >= 0.5)}`);
    console.log(`9 healthy receivers: ${nine} deliveries/s summed per receiver; with receiver 0 timing out: ${nineWithDead} -> ${keep.toFixed(2)} (target >= 0.9) ${verdict(keep >= 0.9)}`);
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
