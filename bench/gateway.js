#!/usr/bin/env node
// bench/gateway: authenticated GET /subscribers/{id} through gateway + gRPC + subscriber service +
// embedded store, against a bare Node HTTP server answering the same JSON, same run, same load tool.
// Targets (issue 2): ratio >= 0.25, gateway p99 < 25 ms at 64 connections, gateway RSS < 200 MB.
// Usage: npm run bench:gateway [-- --duration 15 --connections 64]   (needs `npm run build` first)
'use strict';
const http = require('node:http');
const { parseArgs } = require('node:util');
const { startNatsServer, startService, startGateway, createAccount, adminRequest, serviceAddresses } = require('@mailer/testing');
const { load, rssMb, verdict, cpuSeconds } = require('./lib');

const { values: args } = parseArgs({ options: { duration: { type: 'string', default: '15' }, connections: { type: 'string', default: '64' } } });
const duration = Number(args.duration);
const connections = Number(args.connections);

async function main() {
  const stops = [];
  try {
    const nats = await startNatsServer();
    stops.push(() => nats.stop());
    const subscriber = await startService('subscriber', { NATS_URL: nats.url });
    stops.push(() => subscriber.stop());
    // Run as the chart and the local runner run it (heap cap: RSS < 200 MB, at ~10% throughput).
    const gw = await startGateway({ NATS_URL: nats.url, ...serviceAddresses([subscriber]), NODE_OPTIONS: '--max-old-space-size=128' });
    stops.push(() => gw.stop());

    const { accountId, apiKey } = await createAccount(gw, 'bench');
    // The benchmark measures the request path, not the spec's 300/min budget.
    await adminRequest(gw, 'PATCH', `/admin/accounts/${accountId}/rate-limits`, { perMinute: 1_000_000, perHour: 1_000_000 });
    const created = await fetch(`${gw.url}/subscribers`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'bench@example.org', firstName: 'Bench' }),
    });
    const subscriber1 = await created.json();
    if (created.status !== 201) throw new Error(`creating the subscriber failed: ${created.status} ${JSON.stringify(subscriber1)}`);
    const url = `${gw.url}/subscribers/${subscriber1.id}`;
    const body = JSON.stringify(subscriber1);

    const bare = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body));
    await new Promise((resolve) => bare.listen(0, '127.0.0.1', resolve));
    stops.push(() => new Promise((resolve) => bare.close(resolve)));

    const headers = { 'x-api-key': apiKey };
    await load({ url, headers, duration: 3, connections }); // warm-up (JIT, connections, KV caches)
    const cpuBefore = { gateway: cpuSeconds(gw.pid), service: cpuSeconds(subscriber.pid) };
    const gateway = await load({ url, headers, duration, connections });
    const cpuPerRequest = (name, pid) => Math.round(((cpuSeconds(pid) - cpuBefore[name]) * 1e6) / gateway.ok);
    const cpuUs = { gateway: cpuPerRequest('gateway', gw.pid), service: cpuPerRequest('service', subscriber.pid) };
    const memory = rssMb(gw.pid);
    const baseline = await load({ url: `http://127.0.0.1:${bare.address().port}/subscribers/${subscriber1.id}`, duration, connections });
    const ratio = gateway.reqPerSec / baseline.reqPerSec;

    console.log(`\nbench/gateway: GET /subscribers/{id}, ${connections} connections, ${duration} s each (2 cores shared by load, gateway, service, NATS)`);
    console.table({
      'gateway + gRPC + store': { 'req/s': gateway.reqPerSec, 'p50 ms': gateway.p50, 'p99 ms': gateway.p99, non2xx: gateway.non2xx, errors: gateway.errors },
      'bare Node HTTP': { 'req/s': baseline.reqPerSec, 'p50 ms': baseline.p50, 'p99 ms': baseline.p99, non2xx: baseline.non2xx, errors: baseline.errors },
    });
    console.log(`ratio gateway/bare: ${ratio.toFixed(3)} (target >= 0.25: ${verdict(ratio >= 0.25)})`);
    console.log(`gateway p99: ${gateway.p99} ms (target < 25 ms: ${verdict(gateway.p99 < 25)})`);
    console.log(`gateway RSS: ${memory.rss} MB, peak ${memory.peak} MB (target < 200 MB: ${verdict(memory.peak < 200)})`);
    console.log(`CPU per request: gateway ${cpuUs.gateway} µs, subscriber service ${cpuUs.service} µs`);
    if (gateway.non2xx || gateway.errors) console.log(`WARNING: ${gateway.non2xx} non-2xx and ${gateway.errors} errors under load`);
  } finally {
    for (const stop of stops.reverse()) await stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
