#!/usr/bin/env node
// bench/events: accepted POST /events per second through the gateway (many accounts, so the
// 100/s per-account limit does not bind, but every request still goes through it) against a minimal
// Express 5 endpoint that only parses and publishes (what the stack alone reaches here, in its own
// process: bench/baseline-server.js), and raw JetStream publishes of the same events from one client
// (the bench process, 64 in flight). Same NATS server; every leg warmed, then interleaved rounds
// (gateway, Express + publish, raw, gateway, ...); medians, with the CPU per event of every process.
// Targets: (issue 26) gateway >= 0.75 of Express 5 + one publish; (issue 2) >= 5,000 events/s.
// Usage: npm run bench:events [-- --duration 10 --connections 64 --accounts 100 --rounds 3]
'use strict';
const { parseArgs } = require('node:util');
const { randomUUID } = require('node:crypto');
const { connect, JSONCodec } = require('nats');
const { ensureStreams } = require('@mailer/nats');
const { startNatsServer, startGateway, createAccount, operatorAuth } = require('@mailer/testing');
const { GATEWAY_NODE_OPTIONS, measure, median, verdict, startBaseline, cpuSeconds } = require('./lib');

const { values: args } = parseArgs({
  options: { duration: { type: 'string', default: '10' }, connections: { type: 'string', default: '64' }, accounts: { type: 'string', default: '100' }, rounds: { type: 'string', default: '3' } },
});
const duration = Number(args.duration);
const connections = Number(args.connections);
const accountCount = Number(args.accounts);

const event = (accountId) => ({
  eventId: randomUUID(),
  accountId,
  eventKey: 'order.paid',
  email: 'ann@example.org',
  occurredAt: new Date().toISOString(),
  receivedAt: new Date().toISOString(),
  triggerAutomations: true,
  properties: { orderId: 'o-1', amount: 42.5 },
});

/** Raw JetStream: one client, `inflight` publishes outstanding, for `seconds`: events/s and CPU µs per event of this process. */
async function rawPublish(url, seconds, inflight, pids) {
  const nc = await connect({ servers: url, ...operatorAuth, noAsyncTraces: true });
  const js = nc.jetstream();
  const codec = JSONCodec();
  let acked = 0;
  const before = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, cpuSeconds(pid)]));
  const deadline = Date.now() + seconds * 1000;
  const worker = async (w) => {
    while (Date.now() < deadline) {
      await js.publish(`events.raw-${w % accountCount}`, codec.encode(event(`raw-${w}`)));
      acked++;
    }
  };
  const started = Date.now();
  await Promise.all(Array.from({ length: inflight }, (_, w) => worker(w)));
  const reqPerSec = Math.round(acked / ((Date.now() - started) / 1000));
  const cpuUs = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, Math.round(((cpuSeconds(pid) - before[name]) * 1e6) / acked)]));
  await nc.close();
  return { reqPerSec, cpuUs };
}

async function main() {
  const stops = [];
  try {
    const nats = await startNatsServer();
    stops.push(() => nats.stop());
    // Run as the chart and the local runner run it (heap cap).
    const gw = await startGateway({ NATS_URL: nats.url, NODE_OPTIONS: GATEWAY_NODE_OPTIONS });
    stops.push(() => gw.stop());
    const nc = await connect({ servers: nats.url, ...operatorAuth });
    await ensureStreams(nc);
    await nc.close();
    // The least an /events endpoint can do on this stack: Express 5 + express.json + one acknowledged
    // publish, no authentication, limits, validation or logging.
    const minimal = await startBaseline('express-events', nats.url);
    stops.push(() => minimal.stop());

    const keys = [];
    for (let i = 0; i < accountCount; i++) keys.push((await createAccount(gw, `bench-${i}`)).apiKey);
    const body = JSON.stringify({ eventKey: 'order.paid', email: 'ann@example.org', properties: { orderId: 'o-1', amount: 42.5 } });
    // One fixed request per account, cycled by every connection (autocannon builds each request once).
    const requests = keys.map((key) => ({ method: 'POST', path: '/events', headers: { 'content-type': 'application/json', 'x-api-key': key }, body }));
    const load = { 'load tool': process.pid, 'nats-server': nats.pid };
    const legs = {
      'gateway POST /events (202)': (seconds) => measure({ url: gw.url, requests, duration: seconds, connections, warmup: 0 }, { server: gw.pid, ...load }),
      'Express 5 + one publish, nothing else': (seconds) => measure({ url: minimal.url, requests, duration: seconds, connections, warmup: 0 }, { server: minimal.pid, ...load }),
      'raw JetStream publish, one client': (seconds) => rawPublish(nats.url, seconds, connections, load),
    };
    const results = Object.fromEntries(Object.keys(legs).map((name) => [name, []]));
    for (const leg of Object.values(legs)) await leg(3);
    for (let r = 0; r < Number(args.rounds); r++) for (const [name, leg] of Object.entries(legs)) results[name].push(await leg(duration));

    const med = (name, pick) => median(results[name].map(pick));
    const table = Object.fromEntries(Object.keys(legs).map((name) => [name, {
      'events/s': med(name, (r) => r.reqPerSec), 'p50 ms': med(name, (r) => r.p50 ?? NaN), 'p99 ms': med(name, (r) => r.p99 ?? NaN),
      'server CPU µs/event': med(name, (r) => r.cpuUs.server ?? NaN), 'NATS µs/event': med(name, (r) => r.cpuUs['nats-server']),
      'load tool (client) µs/event': med(name, (r) => r.cpuUs['load tool']),
      non2xx: results[name].reduce((s, r) => s + (r.non2xx ?? 0), 0), errors: results[name].reduce((s, r) => s + (r.errors ?? 0), 0),
    }]));
    console.log(`\nbench/events: POST /events over ${accountCount} accounts, ${connections} connections, ${args.rounds} interleaved rounds of ${duration} s, medians`);
    console.table(table);
    const gateway = table['gateway POST /events (202)'];
    const floor = table['Express 5 + one publish, nothing else'];
    const ofFloor = gateway['events/s'] / floor['events/s'];
    console.log(`ratio gateway / Express 5 + one publish: ${ofFloor.toFixed(3)} (target >= 0.75: ${verdict(ofFloor >= 0.75)}); CPU per event gateway ${gateway['server CPU µs/event']} µs vs ${floor['server CPU µs/event']} µs`);
    console.log(`accepted events/s: ${gateway['events/s']} (target >= 5,000: ${verdict(gateway['events/s'] >= 5000)}); ratio gateway / raw publish ${(gateway['events/s'] / table['raw JetStream publish, one client']['events/s']).toFixed(3)}`);
    if (gateway.non2xx) console.log(`note: ${gateway.non2xx} requests were not 202 (429 means a per-account limit bound: add --accounts)`);
  } finally {
    for (const stop of stops.reverse()) await stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
