#!/usr/bin/env node
// bench/email (part 1, acceptance): accepted POST /email-messages per second through the gateway
// (real processes: NATS, subscriber service, messaging service, gateway) with a simple template, 64
// connections, over a few accounts with raised limits. Each request does the whole acceptance path:
// key, rate limit, validation, gRPC to the messaging service, template and sender lookups, a gRPC
// lookup of the recipient in the subscriber service, the Liquid render, juice, tracking links, one
// store transaction (message + body + outbox job) and the wait for the job's JetStream PubAck.
// Beside it, in the same run: a minimal Express 5 endpoint that renders the same template with
// the platform's engine (@mailer/templates) and publishes one acknowledged job (bench/baseline-server.js `express-email`): the least
// any acceptance endpoint on this stack can do. Target (issue 11): >= 1,000 accepted/s.
// Usage: npm run bench:email [-- --duration 15 --connections 64 --accounts 8]
'use strict';
const { parseArgs } = require('node:util');
const { startNatsServer, startService, startGateway } = require('@mailer/testing');
const { measure, verdict, startBaseline, benchAccount, rssMb } = require('./lib');

const { values: args } = parseArgs({
  options: { duration: { type: 'string', default: '15' }, connections: { type: 'string', default: '64' }, accounts: { type: 'string', default: '8' } },
});
const duration = Number(args.duration);
const connections = Number(args.connections);
const accountCount = Number(args.accounts);

const TEMPLATE = {
  name: 'order-confirmation',
  subject: 'Your order {{ orderId }}',
  html: '<html><body><h1>Thanks, {{ subscriber.firstName | default: "friend" }}!</h1><p>Order {{ orderId }}: {{ total }}</p><a href="https://shop.example/orders/{{ orderId }}">See your order</a></body></html>',
};
const BODY = JSON.stringify({ name: TEMPLATE.name, email: 'ann@example.org', substitutionData: { orderId: 'o-1001', total: '59.90 EUR' }, eventProperties: { orderId: 'o-1001' } });

async function main() {
  const stops = [];
  try {
    const nats = await startNatsServer();
    stops.push(() => nats.stop());
    const subscriber = await startService('subscriber', { NATS_URL: nats.url });
    stops.push(() => subscriber.stop());
    const messaging = await startService('messaging', { NATS_URL: nats.url, SUBSCRIBER_GRPC_ADDR: subscriber.address, ...(process.env.OUTBOX_PUBLISH_WAIT_MS ? { OUTBOX_PUBLISH_WAIT_MS: process.env.OUTBOX_PUBLISH_WAIT_MS } : {}), ...(process.env.BENCH_MESSAGING_EXEC_ARGS ? { NODE_EXEC_ARGS: process.env.BENCH_MESSAGING_EXEC_ARGS } : {}) });
    stops.push(() => messaging.stop());
    const gw = await startGateway({ NATS_URL: nats.url, SUBSCRIBER_GRPC_ADDR: subscriber.address, MESSAGING_GRPC_ADDR: messaging.address });
    stops.push(() => gw.stop());

    const requests = [];
    for (let i = 0; i < accountCount; i++) {
      const account = await benchAccount(gw, `bench-email-${i}`);
      await account.call('POST', '/sender-profiles', { name: 'Shop', fromEmail: 'shop@example.com', fromName: 'The Shop' });
      await account.call('POST', '/email-templates', TEMPLATE);
      requests.push({ method: 'POST', path: '/email-messages', headers: { 'content-type': 'application/json', 'x-api-key': account.apiKey }, body: BODY });
    }
    const gateway = await measure({ url: gw.url, requests, duration, connections }, { gateway: gw.pid, messaging: messaging.pid, subscriber: subscriber.pid, 'nats-server': nats.pid, 'load tool': process.pid });
    const messagingRss = rssMb(messaging.pid);

    const minimal = await startBaseline('express-email', nats.url);
    stops.push(() => minimal.stop());
    const floor = await measure({ url: minimal.url, requests, duration, connections }, { server: minimal.pid });
    const ratio = gateway.reqPerSec / floor.reqPerSec;

    console.log(`\nbench/email part 1: POST /email-messages over ${accountCount} accounts, ${connections} connections, ${duration} s each`);
    console.table({
      'gateway POST /email-messages (202)': { 'messages/s': gateway.reqPerSec, 'p50 ms': gateway.p50, 'p99 ms': gateway.p99, non2xx: gateway.non2xx, errors: gateway.errors },
      'Express 5 + liquid render + one publish': { 'messages/s': floor.reqPerSec, 'p50 ms': floor.p50, 'p99 ms': floor.p99, non2xx: floor.non2xx, errors: floor.errors },
    });
    console.log(`accepted messages/s: ${gateway.reqPerSec} (target >= 1,000: ${verdict(gateway.reqPerSec >= 1000)})`);
    console.log(`ratio gateway/minimal: ${ratio.toFixed(3)}`);
    console.log(`CPU per accepted message (µs): ${Object.entries(gateway.cpuUs).map(([name, us]) => `${name} ${us}`).join(', ')}`);
    console.log(`messaging service RSS after the run: ${messagingRss.rss} MB (peak ${messagingRss.peak} MB)`);
    if (gateway.non2xx) console.log(`note: ${gateway.non2xx} requests were not 202`);
  } finally {
    for (const stop of stops.reverse()) await stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
