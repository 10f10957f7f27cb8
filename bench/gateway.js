#!/usr/bin/env node
// bench/gateway: authenticated GET /subscribers/{id} through gateway + gRPC + subscriber service +
// embedded store, against baselines answering the same JSON with the same load tool: Express 5 making
// one unary grpc-js call per request to a trivial gRPC server returning a record of the same size (the
// floor of "Express in front of gRPC"), Express 5 with one route doing nothing else (what the framework
// alone reaches here), and a bare Node HTTP server. Every server runs in its own process
// (bench/baseline-server.js), all warmed first, then measured in interleaved rounds (gateway, Express +
// gRPC, Express, bare, gateway, ...); medians, with the CPU per request of every process from /proc.
// Targets (issue 26): gateway >= 0.65 of Express + one gRPC call, p99 < 25 ms; (issue 16) RSS < 200 MB.
// Usage: npm run bench:gateway [-- --duration 10 --connections 64 --rounds 3]   (needs `npm run build` first)
'use strict';
const { parseArgs } = require('node:util');
const { startNatsServer, startService, startGateway, serviceAddresses } = require('@mailer/testing');
const { GATEWAY_NODE_OPTIONS, measure, rssMb, verdict, startBaseline, benchAccount, median } = require('./lib');

const { values: args } = parseArgs({ options: { duration: { type: 'string', default: '10' }, connections: { type: 'string', default: '64' }, rounds: { type: 'string', default: '3' } } });
const duration = Number(args.duration);
const connections = Number(args.connections);

async function main() {
  const stops = [];
  try {
    const nats = await startNatsServer();
    stops.push(() => nats.stop());
    const subscriber = await startService('subscriber', { NATS_URL: nats.url });
    stops.push(() => subscriber.stop());
    // Run as the chart and the local runner run it (heap caps: RSS < 200 MB).
    const gw = await startGateway({ NATS_URL: nats.url, ...serviceAddresses([subscriber]), NODE_OPTIONS: GATEWAY_NODE_OPTIONS });
    stops.push(() => gw.stop());

    // The benchmark measures the request path, not the spec's 300/min budget (benchAccount raises it).
    const account = await benchAccount(gw, 'bench');
    const record = await account.call('POST', '/subscribers', { email: 'bench@example.org', firstName: 'Bench' });
    const path = `/subscribers/${record.id}`;
    const body = JSON.stringify(record);

    const bare = await startBaseline('node', body);
    stops.push(() => bare.stop());
    const expressOnly = await startBaseline('express', body);
    stops.push(() => expressOnly.stop());
    const grpcRecord = await startBaseline('grpc', body);
    stops.push(() => grpcRecord.stop());
    const expressGrpc = await startBaseline('express-grpc', new URL(grpcRecord.url).host);
    stops.push(() => expressGrpc.stop());

    const legs = {
      'gateway + gRPC + store': { url: gw.url + path, headers: { 'x-api-key': account.apiKey }, pids: { server: gw.pid, 'subscriber service': subscriber.pid, 'nats-server': nats.pid } },
      'Express 5 + one gRPC call': { url: expressGrpc.url + path, pids: { server: expressGrpc.pid, 'gRPC server': grpcRecord.pid } },
      'Express 5, one route, nothing else': { url: expressOnly.url + path, pids: { server: expressOnly.pid } },
      'bare Node HTTP': { url: bare.url + path, pids: { server: bare.pid } },
    };
    const results = Object.fromEntries(Object.keys(legs).map((name) => [name, []]));
    const run = (name, seconds, warmup) => {
      const { pids, ...opts } = legs[name];
      return measure({ ...opts, duration: seconds, connections, warmup }, { ...pids, 'load tool': process.pid });
    };
    for (const name of Object.keys(legs)) await run(name, 3, 0);
    for (let r = 0; r < Number(args.rounds); r++) for (const name of Object.keys(legs)) results[name].push(await run(name, duration, 0));

    const med = (name, pick) => median(results[name].map(pick));
    const table = Object.fromEntries(Object.keys(legs).map((name) => [name, {
      'req/s': med(name, (r) => r.reqPerSec), 'p50 ms': med(name, (r) => r.p50), 'p99 ms': med(name, (r) => r.p99),
      'server CPU µs/req': med(name, (r) => r.cpuUs.server),
      'other CPU µs/req': Object.keys(legs[name].pids).filter((p) => p !== 'server').map((p) => `${p} ${med(name, (r) => r.cpuUs[p])}`).join(', '),
      'load tool µs/req': med(name, (r) => r.cpuUs['load tool']),
      non2xx: results[name].reduce((s, r) => s + r.non2xx, 0), errors: results[name].reduce((s, r) => s + r.errors, 0),
    }]));
    console.log(`\nbench/gateway: GET /subscribers/{id}, ${connections} connections, ${args.rounds} interleaved rounds of ${duration} s, medians (2 cores shared by load, servers, NATS)`);
    console.table(table);
    const gateway = table['gateway + gRPC + store'];
    const ofExpressGrpc = gateway['req/s'] / table['Express 5 + one gRPC call']['req/s'];
    const ofExpress = gateway['req/s'] / table['Express 5, one route, nothing else']['req/s'];
    console.log(`ratio gateway / Express + one gRPC call: ${ofExpressGrpc.toFixed(3)} (target >= 0.65: ${verdict(ofExpressGrpc >= 0.65)}); CPU per request gateway ${gateway['server CPU µs/req']} µs vs ${table['Express 5 + one gRPC call']['server CPU µs/req']} µs`);
    console.log(`ratio gateway / Express alone: ${ofExpress.toFixed(3)}; Express alone / bare Node: ${(table['Express 5, one route, nothing else']['req/s'] / table['bare Node HTTP']['req/s']).toFixed(3)}`);
    console.log(`gateway p99: ${gateway['p99 ms']} ms (target < 25 ms: ${verdict(gateway['p99 ms'] < 25)})`);
    const memory = rssMb(gw.pid);
    console.log(`gateway RSS: ${memory.rss} MB, peak ${memory.peak} MB (target < 200 MB: ${verdict(memory.peak < 200)})`);
  } finally {
    for (const stop of stops.reverse()) await stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
