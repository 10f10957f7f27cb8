#!/usr/bin/env node
// bench/gateway: authenticated GET /subscribers/{id} through gateway + gRPC + subscriber service +
// embedded store, against baselines answering the same JSON in the same run with the same load tool:
// a bare Node HTTP server, Express 5 with one route doing nothing else (what the framework alone
// reaches here), and Express 5 making one unary grpc-js call per request to a trivial gRPC server
// returning a record of the same size (the floor of "Express in front of gRPC"). Every server runs in
// its own process (bench/baseline-server.js).
// Targets (issue 16): gateway >= 0.40 of Express alone and >= 0.60 of Express + one gRPC call,
// gateway p99 < 25 ms at 64 connections, gateway RSS < 200 MB.
// Usage: npm run bench:gateway [-- --duration 15 --connections 64]   (needs `npm run build` first)
'use strict';
const { parseArgs } = require('node:util');
const { startNatsServer, startService, startGateway, createAccount, adminRequest, serviceAddresses } = require('@mailer/testing');
const { measure, rssMb, verdict, startBaseline } = require('./lib');

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

    // Baselines in their own processes, like the gateway: bare Node (the target's denominator) and
    // Express 5 with one route doing nothing else (the ceiling the fixed stack itself sets).
    const bare = await startBaseline('node', body);
    stops.push(() => bare.stop());
    const expressOnly = await startBaseline('express', body);
    stops.push(() => expressOnly.stop());
    const grpcRecord = await startBaseline('grpc', body);
    stops.push(() => grpcRecord.stop());
    const expressGrpc = await startBaseline('express-grpc', new URL(grpcRecord.url).host);
    stops.push(() => expressGrpc.stop());

    const headers = { 'x-api-key': apiKey };
    const pids = { gateway: gw.pid, 'subscriber service': subscriber.pid, 'nats-server': nats.pid, 'load tool': process.pid };
    const gateway = await measure({ url, headers, duration, connections }, pids);
    const memory = rssMb(gw.pid);
    const path = `/subscribers/${subscriber1.id}`;
    const baselineRun = (server) => measure({ url: server.url + path, duration, connections }, { server: server.pid });
    const baseline = await baselineRun(bare);
    const express = await baselineRun(expressOnly);
    const overGrpc = await measure({ url: expressGrpc.url + path, duration, connections }, { server: expressGrpc.pid, 'gRPC server': grpcRecord.pid });
    const ofExpress = gateway.reqPerSec / express.reqPerSec;
    const ofExpressGrpc = gateway.reqPerSec / overGrpc.reqPerSec;

    const row = (r, cpu) => ({ 'req/s': r.reqPerSec, 'p50 ms': r.p50, 'p99 ms': r.p99, 'server CPU µs/req': cpu, non2xx: r.non2xx, errors: r.errors });
    console.log(`\nbench/gateway: GET /subscribers/{id}, ${connections} connections, ${duration} s each (2 cores shared by load, gateway, service, NATS)`);
    console.table({
      'gateway + gRPC + store': row(gateway, gateway.cpuUs.gateway),
      'bare Node HTTP': row(baseline, baseline.cpuUs.server),
      'Express 5, one route, nothing else': row(express, express.cpuUs.server),
      'Express 5 + one gRPC call': row(overGrpc, overGrpc.cpuUs.server),
    });
    console.log(`ratio gateway / Express alone: ${ofExpress.toFixed(3)} (target >= 0.40: ${verdict(ofExpress >= 0.4)})`);
    console.log(`ratio gateway / Express + one gRPC call: ${ofExpressGrpc.toFixed(3)} (target >= 0.60: ${verdict(ofExpressGrpc >= 0.6)})`);
    console.log(`ratio gateway / bare Node: ${(gateway.reqPerSec / baseline.reqPerSec).toFixed(3)}; Express alone / bare Node: ${(express.reqPerSec / baseline.reqPerSec).toFixed(3)}`);
    console.log(`gateway p99: ${gateway.p99} ms (target < 25 ms: ${verdict(gateway.p99 < 25)})`);
    console.log(`gateway RSS: ${memory.rss} MB, peak ${memory.peak} MB (target < 200 MB: ${verdict(memory.peak < 200)})`);
    console.log(`CPU per gateway request (µs): ${Object.entries(gateway.cpuUs).map(([name, us]) => `${name} ${us}`).join(', ')}`);
    if (gateway.non2xx || gateway.errors) console.log(`WARNING: ${gateway.non2xx} non-2xx and ${gateway.errors} errors under load`);
  } finally {
    for (const stop of stops.reverse()) await stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
