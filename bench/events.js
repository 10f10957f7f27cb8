#!/usr/bin/env node
// bench/events: accepted POST /events per second through the gateway (many accounts, so the
// 100/s per-account limit does not bind, but every request still goes through it) against raw
// JetStream publish of the same events from one Node client, same run, same NATS server, and a
// minimal Express 5 endpoint that only publishes (what the stack alone reaches here).
// Targets (issue 2): >= 5,000 events/s and ratio >= 0.3.
// Usage: npm run bench:events [-- --duration 15 --connections 64 --accounts 100]
'use strict';
const { parseArgs } = require('node:util');
const { randomUUID } = require('node:crypto');
const { connect, JSONCodec } = require('nats');
const { ensureStreams } = require('@mailer/nats');
const { startNatsServer, startGateway, createAccount, operatorAuth } = require('@mailer/testing');
const { measure, verdict, startBaseline } = require('./lib');

const { values: args } = parseArgs({
  options: { duration: { type: 'string', default: '15' }, connections: { type: 'string', default: '64' }, accounts: { type: 'string', default: '100' } },
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

/** Raw JetStream: one client, `inflight` publishes outstanding, for `seconds`. */
async function rawPublish(url, seconds, inflight) {
  const nc = await connect({ servers: url, ...operatorAuth });
  const js = nc.jetstream();
  const codec = JSONCodec();
  let acked = 0;
  const deadline = Date.now() + seconds * 1000;
  const worker = async (w) => {
    while (Date.now() < deadline) {
      await js.publish(`events.raw-${w % accountCount}`, codec.encode(event(`raw-${w}`)));
      acked++;
    }
  };
  const started = Date.now();
  await Promise.all(Array.from({ length: inflight }, (_, w) => worker(w)));
  const rate = Math.round(acked / ((Date.now() - started) / 1000));
  await nc.close();
  return rate;
}

async function main() {
  const stops = [];
  try {
    const nats = await startNatsServer();
    stops.push(() => nats.stop());
    // Run as the chart and the local runner run it (heap cap).
    const gw = await startGateway({ NATS_URL: nats.url, NODE_OPTIONS: '--max-old-space-size=128' });
    stops.push(() => gw.stop());
    const nc = await connect({ servers: nats.url, ...operatorAuth });
    await ensureStreams(nc);
    await nc.close();

    const keys = [];
    for (let i = 0; i < accountCount; i++) keys.push((await createAccount(gw, `bench-${i}`)).apiKey);
    const body = JSON.stringify({ eventKey: 'order.paid', email: 'ann@example.org', properties: { orderId: 'o-1', amount: 42.5 } });
    // One fixed request per account, cycled by every connection (autocannon builds each request once).
    const requests = keys.map((key) => ({
      method: 'POST',
      path: '/events',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body,
    }));
    const gateway = await measure({ url: gw.url, requests, duration, connections }, { gateway: gw.pid, 'nats-server': nats.pid, 'load tool': process.pid });
    const raw = await rawPublish(nats.url, duration, connections);
    const ratio = gateway.reqPerSec / raw;
    // The least an /events endpoint can do on this stack: Express 5 + express.json + one acknowledged
    // publish, no authentication, limits, validation or logging (own process, like the gateway).
    const minimal = await startBaseline('express-events', nats.url);
    stops.push(() => minimal.stop());
    const floor = await measure({ url: minimal.url, requests, duration, connections }, { server: minimal.pid });

    console.log(`\nbench/events: POST /events over ${accountCount} accounts, ${connections} connections, ${duration} s each`);
    console.table({
      'gateway POST /events (202)': { 'events/s': gateway.reqPerSec, 'p50 ms': gateway.p50, 'p99 ms': gateway.p99, 'server CPU µs/event': gateway.cpuUs.gateway, non2xx: gateway.non2xx, errors: gateway.errors },
      'raw JetStream publish, one client': { 'events/s': raw },
      'Express 5 + one publish, nothing else': { 'events/s': floor.reqPerSec, 'p50 ms': floor.p50, 'p99 ms': floor.p99, 'server CPU µs/event': floor.cpuUs.server, non2xx: floor.non2xx, errors: floor.errors },
    });
    console.log(`accepted events/s: ${gateway.reqPerSec} (target >= 5,000: ${verdict(gateway.reqPerSec >= 5000)})`);
    console.log(`ratio gateway/raw: ${ratio.toFixed(3)} (target >= 0.3: ${verdict(ratio >= 0.3)})`);
    const ofFloor = gateway.reqPerSec / floor.reqPerSec;
    console.log(`ratio gateway / Express 5 + one publish: ${ofFloor.toFixed(3)} (issue 16 target >= 0.75: ${verdict(ofFloor >= 0.75)}); CPU per event gateway ${gateway.cpuUs.gateway} µs vs ${floor.cpuUs.server} µs`);
    console.log(`ratio minimal-Express/raw: ${(floor.reqPerSec / raw).toFixed(3)} (the most any Express /events could reach here)`);
    console.log(`CPU per accepted event (µs): ${Object.entries(gateway.cpuUs).map(([name, us]) => `${name} ${us}`).join(', ')}`);
    if (gateway.non2xx) console.log(`note: ${gateway.non2xx} requests were not 202 (429 means a per-account limit bound: add --accounts)`);
  } finally {
    for (const stop of stops.reverse()) await stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
