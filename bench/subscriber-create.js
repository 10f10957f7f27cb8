#!/usr/bin/env node
// bench/subscriber-create: POST /subscribers (a new address each request) through gateway + gRPC +
// subscriber service + embedded store, this tree (B) against another build of the system (A, a checkout
// given by --baseline-root, e.g. the last commit before the embedded engine became SQLite). Each tree
// starts its own stack of real processes with its own harness (packages/testing of that tree: its
// nats-server set-up, credentials and entry points), both with this tree's runner's NODE_OPTIONS, so the
// code differs and the runtime does not. Rounds alternate A, B, A, B, ... on the same machine: the shared
// load moves both alike. Per round: req/s, p50/p99, CPU µs per created subscriber of the gateway, the
// subscriber service and nats-server, the service's RSS; then the medians, the ratio B/A and the noise
// (how far the ratios of the round pairs spread). Only 201s count (other answers and errors are shown),
// and at the end each service must hold every subscriber it answered 201 for.
// Target (issue 25): B not lower than A.
// A baseline tree: `git worktree add --detach ../baseline <commit>`, then in it `npm install` and
// `npx tsc -b` (on Node 24).
// Usage: npm run bench:subscriber-create -- --baseline-root ../baseline [--duration 10 --connections 32 --rounds 3]
'use strict';
const os = require('node:os');
const path = require('node:path');
const { randomUUID } = require('node:crypto');
const { parseArgs } = require('node:util');
const { GATEWAY_NODE_OPTIONS, measure, median, rssMb, verdict, benchAccount } = require('./lib');

const { values: args } = parseArgs({
  options: {
    'baseline-root': { type: 'string' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '32' },
    rounds: { type: 'string', default: '3' },
  },
});
if (!args['baseline-root']) {
  console.error('usage: node bench/subscriber-create.js --baseline-root <checkout of the baseline commit, installed and built> [--duration 10 --connections 32 --rounds 3]');
  process.exit(2);
}
const duration = Number(args.duration);
const connections = Number(args.connections);
/** The subscriber service's NODE_OPTIONS as the local runner (scripts/run-local.js) sets them. */
const SUBSCRIBER_NODE_OPTIONS = '--max-old-space-size=768';

/** A stack of one tree: nats-server, subscriber service, gateway, an account with raised limits. */
async function startStack(root, stops) {
  const harness = require(path.join(root, 'packages', 'testing'));
  const nats = await harness.startNatsServer();
  stops.push(() => nats.stop());
  const subscriber = await harness.startService('subscriber', { NATS_URL: nats.url, NODE_OPTIONS: SUBSCRIBER_NODE_OPTIONS });
  stops.push(() => subscriber.stop());
  const gw = await harness.startGateway({ NATS_URL: nats.url, ...harness.serviceAddresses([subscriber]), NODE_OPTIONS: GATEWAY_NODE_OPTIONS });
  stops.push(() => gw.stop());
  const account = await benchAccount(gw, 'bench-create');
  return { root, nats, subscriber, gw, account, created: 0, loads: 0 };
}

// A new address for every request of every round (a repeated one would be a 409).
const run = randomUUID().slice(0, 8);
let next = 0;
const createRequests = [{
  method: 'POST',
  setupRequest: (req) => ({ ...req, body: JSON.stringify({ email: `new-${run}-${++next}@example.org`, firstName: 'New' }) }),
}];

async function round(stack, seconds) {
  const { gw, subscriber, nats, account } = stack;
  const result = await measure(
    { url: `${gw.url}/subscribers`, method: 'POST', headers: { 'x-api-key': account.apiKey, 'content-type': 'application/json' }, requests: createRequests, duration: seconds, connections, warmup: 0 },
    { gateway: gw.pid, subscriber: subscriber.pid, 'nats-server': nats.pid, 'load tool': process.pid },
  );
  stack.created += result.ok;
  stack.loads += 1;
  return { ...result, rss: rssMb(subscriber.pid).rss, load: os.loadavg()[0] };
}

const spread = (values) => (Math.max(...values) - Math.min(...values)) / 2 / median(values);
const pct = (x) => `${(x * 100).toFixed(0)}%`;

async function main() {
  const stops = [];
  try {
    const stacks = {
      A: await startStack(path.resolve(args['baseline-root']), stops),
      B: await startStack(path.resolve(__dirname, '..'), stops),
    };
    const names = { A: `A ${stacks.A.root}`, B: `B ${stacks.B.root}` };
    console.log(`\nbench/subscriber-create: POST /subscribers, a new address each, ${connections} connections, ${args.rounds} rounds of ${duration} s each way, alternated A, B (load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')})`);
    for (const name of ['A', 'B']) await round(stacks[name], 3); // warm-up: JIT, connections, first pages of the store
    const results = { A: [], B: [] };
    for (let r = 1; r <= Number(args.rounds); r++) {
      for (const name of ['A', 'B']) {
        const m = await round(stacks[name], duration);
        results[name].push(m);
        console.log(`round ${r} ${name}: ${m.reqPerSec} req/s, p50 ${m.p50} ms, p99 ${m.p99} ms; CPU µs/request gateway ${m.cpuUs.gateway}, subscriber ${m.cpuUs.subscriber}, nats-server ${m.cpuUs['nats-server']}, load tool ${m.cpuUs['load tool']}; subscriber RSS ${m.rss} MB; non-2xx ${m.non2xx}, errors ${m.errors}; load average ${m.load.toFixed(1)}`);
      }
    }

    // Every 201 is a stored subscriber. A load ends with up to `connections` requests in flight that
    // the load tool no longer counts but the service still creates: at most that many more are stored.
    for (const name of ['A', 'B']) {
      const stack = stacks[name];
      const page = await stack.account.call('GET', '/subscribers?pageSize=1');
      stack.stored = Object.values(page.statusCounts).reduce((a, b) => a + Number(b), 0);
      if (stack.stored < stack.created || stack.stored > stack.created + connections * stack.loads) throw new Error(`${names[name]}: ${stack.created} answered 201 in ${stack.loads} loads of ${connections} connections, ${stack.stored} stored`);
    }

    const med = (name, pick) => median(results[name].map(pick));
    const table = Object.fromEntries(['A', 'B'].map((name) => [names[name], {
      'req/s': med(name, (m) => m.reqPerSec), 'p50 ms': med(name, (m) => m.p50), 'p99 ms': med(name, (m) => m.p99),
      'gateway µs/req': med(name, (m) => m.cpuUs.gateway), 'subscriber µs/req': med(name, (m) => m.cpuUs.subscriber),
      'nats µs/req': med(name, (m) => m.cpuUs['nats-server']), 'subscriber RSS MB': rssMb(stacks[name].subscriber.pid).rss,
      '201 / stored': `${stacks[name].created} / ${stacks[name].stored}`, 'non-2xx': results[name].reduce((s, m) => s + m.non2xx, 0), errors: results[name].reduce((s, m) => s + m.errors, 0),
    }]));
    console.log('\nmedians');
    console.table(table);
    const [a, b] = [table[names.A], table[names.B]];
    const ratio = b['req/s'] / a['req/s'];
    // The noise of the comparison: how far the ratios of rounds run side by side spread around their
    // median (each pair shared the machine's load of its moment). Lower than 1 but within that spread
    // passes only while B was at least as fast as A in some pair.
    const pairs = results.B.map((m, i) => m.reqPerSec / results.A[i].reqPerSec);
    const noise = spread(pairs);
    const treeSpread = Math.max(spread(results.A.map((m) => m.reqPerSec)), spread(results.B.map((m) => m.reqPerSec)));
    const lowerIn = pairs.filter((p) => p < 1).length;
    const cpu = (row) => row['gateway µs/req'] + row['subscriber µs/req'];
    console.log(`ratio B/A req/s: ${ratio.toFixed(3)}; round pairs ${pairs.map((p) => p.toFixed(2)).join(', ')} (spread ±${pct(noise)}; B lower in ${lowerIn} of ${pairs.length}); rounds of one tree spread ±${pct(treeSpread)} around their median`);
    console.log(`ratio B/A CPU per request, gateway + subscriber service: ${(cpu(b) / cpu(a)).toFixed(3)} (${cpu(b)} vs ${cpu(a)} µs)`);
    const withinNoise = ratio < 1 && ratio >= 1 - noise && lowerIn < pairs.length;
    console.log(`not lower than today: ${verdict(ratio >= 1 || withinNoise)}${withinNoise ? ` (lower by ${pct(1 - ratio)}, within the ±${pct(noise)} noise)` : ''}`);
  } finally {
    for (const stop of stops.reverse()) await Promise.resolve().then(stop).catch((err) => console.error(err));
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
