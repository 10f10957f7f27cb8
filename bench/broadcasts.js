#!/usr/bin/env node
// bench/broadcasts (issue 28), two figures with real processes (NATS, subscriber, messaging with its
// delivery worker, gateway):
// 1. POST /email-messages/batch of 500 messages (a simple template): messages accepted per second
//    through the gateway, beside single POST /email-messages sends of the same messages in the same
//    run (the ratio is what batching buys). Delivery is paused in this part: acceptance is measured.
//    Target >= 5,000 messages/s.
// 2. A broadcast to `--readers` subscribers (default 100,000, the whole account, no segment): time
//    from schedule to the last mail at a local SMTP sink, beside one pooled nodemailer transport
//    sending the same number of pre-rendered mails to the same sink in the same run (target ratio
//    >= 0.5); the messaging service's peak RSS (target < 400 MB); the reconciliation at the end
//    (exact: audience = readers, every recipient delivered).
// The account's send rate (MAIL_ACCOUNT_RATE_PER_SECOND, default 100/s) and rate limits are raised:
// the pipeline is measured, not the operator's budgets.
// Usage: npm run bench:broadcasts [-- --readers 100000 --page 500 --duration 15 --connections 4 --skip-batch --skip-broadcast]
//        (BENCH_PROFILE=<dir>: CPU profile of messaging)
'use strict';
const { parseArgs } = require('node:util');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { freePort, spawnReady, startNatsServer, startService, startGateway } = require('@mailer/testing');
const { measure, verdict, benchAccount, rssMb, cpuSeconds, startSmtpSink, rawNodemailer, rawNodemailerLabel } = require('./lib');

const { values: args } = parseArgs({
  options: {
    readers: { type: 'string', default: '100000' },
    page: { type: 'string', default: '500' },
    duration: { type: 'string', default: '15' },
    connections: { type: 'string', default: '4' },
    'skip-batch': { type: 'boolean', default: false },
    'skip-broadcast': { type: 'boolean', default: false },
  },
});
const total = Number(args.readers);
const BATCH = 500;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const profile = process.env.BENCH_PROFILE ? { NODE_EXEC_ARGS: `--cpu-prof --cpu-prof-dir=${process.env.BENCH_PROFILE}` } : {};
/** The newsletter as the raw floor sends it, pre-rendered (the template below, for a reader without a name). */
const RAW_HTML = `<p>Hi reader</p>${'<p><a href="https://shop.example/spring">Our spring picks</a> and a few words about them.</p>'.repeat(5)}`;
const TEMPLATE = {
  name: 'newsletter',
  subject: 'Spring news for {{ subscriber.firstName | default: "you" }}',
  html: `<p>Hi {{ subscriber.firstName | default: "reader" }}</p>${'<p><a href="https://shop.example/spring">Our spring picks</a> and a few words about them.</p>'.repeat(5)}`,
};

const dirs = [];
const dir = (name) => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), `mailer-bench-broadcasts-${name}-`));
  dirs.push(d);
  return d;
};

/** Part 1: batches of 500 vs single sends, through the gateway, delivery paused. */
async function batchPart() {
  const stops = [];
  try {
    const nats = await startNatsServer();
    stops.push(() => nats.stop());
    const subscriber = await startService('subscriber', { NATS_URL: nats.url });
    stops.push(() => subscriber.stop());
    const messaging = await startService('messaging', { NATS_URL: nats.url, SUBSCRIBER_GRPC_ADDR: subscriber.address, MAIL_SEND_PAUSED: 'true', ...profile });
    stops.push(() => messaging.stop());
    const gw = await startGateway({ NATS_URL: nats.url, SUBSCRIBER_GRPC_ADDR: subscriber.address, MESSAGING_GRPC_ADDR: messaging.address });
    stops.push(() => gw.stop());
    const a = await benchAccount(gw, 'bench-batch');
    await a.call('POST', '/sender-profiles', { name: 'Shop', fromEmail: 'shop@example.com', fromName: 'The Shop' });
    await a.call('POST', '/email-templates', TEMPLATE);
    const headers = { 'content-type': 'application/json', 'x-api-key': a.apiKey };
    const message = (i) => ({ name: TEMPLATE.name, email: `reader${i}@example.org`, substitutionData: { orderId: `o-${i}` } });
    const batchBody = JSON.stringify({ messages: Array.from({ length: BATCH }, (_, i) => message(i)) });
    const pids = { gateway: gw.pid, messaging: messaging.pid, subscriber: subscriber.pid, 'nats-server': nats.pid };
    const duration = Number(args.duration);
    const connections = Number(args.connections);
    // The baseline first: single sends leave less behind them (jobs being published) than batches.
    const single = await measure({ url: gw.url, requests: [{ method: 'POST', path: '/email-messages', headers, body: JSON.stringify(message(0)) }], duration, connections: 64 }, pids);
    const batched = await measure({ url: gw.url, requests: [{ method: 'POST', path: '/email-messages/batch', headers, body: batchBody }], duration, connections }, pids);
    const perMessage = (cpuUs, n) => Object.entries(cpuUs).map(([name, us]) => `${name} ${Math.round(us / n)}`).join(', ');
    const rate = Math.round((batched.ok * BATCH) / duration);
    console.log(`\nPOST /email-messages/batch of ${BATCH}, ${connections} connections, ${duration} s: ${batched.ok} requests = ${rate} messages/s accepted (p50 ${batched.p50} ms, p99 ${batched.p99} ms, non-2xx ${batched.non2xx}, errors ${batched.errors})`);
    console.log(`  CPU per accepted message (µs): ${perMessage(batched.cpuUs, BATCH)}`);
    console.log(`POST /email-messages one by one, 64 connections: ${single.reqPerSec} messages/s (p50 ${single.p50} ms); CPU per message (µs): ${perMessage(single.cpuUs, 1)}`);
    console.log(`batch messages/s: ${rate} (target >= 5,000: ${verdict(rate >= 5000)}); ratio batch/single ${(rate / Math.max(1, single.reqPerSec)).toFixed(1)}`);
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  }
}

/** Part 2: a broadcast to `total` readers vs raw nodemailer to the same sink. */
async function broadcastPart() {
  const stops = [];
  try {
    const nats = await startNatsServer();
    stops.push(() => nats.stop());
    const sink = await startSmtpSink();
    stops.push(() => sink.close());
    // The raw floor first, on a quiet machine (a warm-up of 500, then the measured run).
    const rawMail = { from: { name: 'News', address: 'news@example.com' }, subject: (i) => `Spring news for Reader ${i}`, html: RAW_HTML };
    await rawNodemailer(sink, 500, rawMail);
    const raw = await rawNodemailer(sink, total, rawMail);
    console.log(`\n${rawNodemailerLabel}: ${Math.round(raw)} mails/s over ${total}`);

    const subscriberAddr = `127.0.0.1:${await freePort()}`;
    const messagingAddr = `127.0.0.1:${await freePort()}`;
    const common = { LOG_LEVEL: 'info', METRICS_PORT: '0', NATS_URL: nats.url, SUBSCRIBER_GRPC_ADDR: subscriberAddr, MESSAGING_GRPC_ADDR: messagingAddr };
    const subscriber = await spawnReady('services/subscriber/dist/main.js', { ...common, DATA_DIR: dir('subscriber') });
    stops.unshift(() => subscriber.stop());
    const messaging = await spawnReady('services/messaging/dist/main.js', {
      ...common, DATA_DIR: dir('messaging'), MESSAGING_HTTP_ADDR: `127.0.0.1:${await freePort()}`, BOUNCE_SMTP_PORT: String(await freePort()),
      TRACKING_SECRET: crypto.randomBytes(32).toString('base64url'), SMTP_URL: sink.url, MAIL_ACCOUNT_RATE_PER_SECOND: '100000', BROADCAST_SEND_PAGE_SIZE: args.page, ...profile,
    });
    stops.unshift(() => messaging.stop());
    const gw = await startGateway({ NATS_URL: nats.url, SUBSCRIBER_GRPC_ADDR: subscriberAddr, MESSAGING_GRPC_ADDR: messagingAddr });
    stops.unshift(() => gw.stop());

    const a = await benchAccount(gw, 'bench-broadcast');
    await a.call('POST', '/sender-profiles', { name: 'News', fromEmail: 'news@example.com', fromName: 'The News' });
    await a.call('POST', '/email-templates', TEMPLATE);
    const loaded = Date.now();
    for (let i = 0; i < total; i += 1000) {
      const batch = Array.from({ length: Math.min(1000, total - i) }, (_, j) => ({ email: `reader${i + j}@readers.test`, firstName: `Reader ${i + j}` }));
      await a.call('POST', '/subscribers/sync', { mode: 'CREATE_ONLY', subscribers: batch });
    }
    console.log(`loaded ${total} ACTIVE subscribers in ${Math.round((Date.now() - loaded) / 1000)} s`);
    const broadcast = await a.call('POST', '/broadcasts', { name: 'Bench spring', templateName: TEMPLATE.name });

    sink.reset();
    const cpu0 = { messaging: cpuSeconds(messaging.pid), subscriber: cpuSeconds(subscriber.pid) };
    const rssBefore = rssMb(messaging.pid).rss;
    let peak = rssBefore;
    const scheduled = Date.now();
    await a.call('POST', `/broadcasts/${broadcast.id}/schedule`, {});
    let queuedAt = null;
    let lastReport = scheduled;
    let reads = 0;
    let settled = false;
    while (sink.times.length < total && !settled) {
      await sleep(500);
      peak = Math.max(peak, rssMb(messaging.pid).rss);
      const b = await a.call('GET', `/broadcasts/${broadcast.id}`);
      reads++;
      const r = b.reconciliation;
      const excluded = Object.values(r.excluded).reduce((x, y) => x + y, 0);
      if (r.audience !== r.recipients + excluded || r.recipients !== r.pending + r.sent + r.delivered + r.deferred + r.failed + r.bounced + r.suppressed) {
        throw new Error(`the reconciliation does not add up: ${JSON.stringify(r)}`);
      }
      if (!queuedAt && b.status === 'SENT') queuedAt = Date.now();
      // Nothing more will come (a reader's mail FAILED): stop waiting for the sink.
      settled = b.status === 'SENT' && r.pending === 0 && r.deferred === 0 && sink.times.length >= r.sent + r.delivered;
      if (Date.now() - lastReport > 15_000) {
        lastReport = Date.now();
        console.log(`  ${sink.times.length} mails at the sink after ${Math.round((Date.now() - scheduled) / 1000)} s (${b.status}: audience ${r.audience}, pending ${r.pending}, delivered ${r.delivered}, deferred ${r.deferred}, failed ${r.failed})`);
      }
    }
    const seconds = (sink.times[sink.times.length - 1] - scheduled) / 1000;
    const rate = sink.times.length / seconds;
    const cpu = { messaging: cpuSeconds(messaging.pid) - cpu0.messaging, subscriber: cpuSeconds(subscriber.pid) - cpu0.subscriber };
    // Every mail is at the sink; the last DELIVERED may be recorded a moment later.
    let final;
    for (const deadline = Date.now() + 60_000; ; await sleep(500)) {
      final = await a.call('GET', `/broadcasts/${broadcast.id}`);
      if (final.reconciliation.delivered === total || Date.now() > deadline) break;
    }
    const r = final.reconciliation;
    const exact = final.status === 'SENT' && r.audience === total && r.recipients === total && r.delivered === total;
    console.log(`broadcast to ${total} readers: schedule -> last mail ${seconds.toFixed(1)} s = ${Math.round(rate)} mails/s; every mail queued (SENT) after ${queuedAt ? ((queuedAt - scheduled) / 1000).toFixed(1) : '?'} s`);
    console.log(`CPU per mail: messaging ${Math.round((cpu.messaging * 1e6) / total)} µs, subscriber ${Math.round((cpu.subscriber * 1e6) / total)} µs; messaging RSS before ${rssBefore} MB, peak during the send ${peak} MB (target < 400 MB: ${verdict(peak < 400)}), VmHWM ${rssMb(messaging.pid).peak} MB`);
    console.log(`reconciliation at the end (${reads} reads during the send, each adding up): ${JSON.stringify(r)} (${exact ? 'exact' : 'NOT exact'})`);
    const ratio = rate / raw;
    console.log(`ratio: ${ratio.toFixed(2)} of raw nodemailer (target >= 0.5) ${verdict(ratio >= 0.5)}`);
  } finally {
    for (const stop of stops) await stop().catch(() => undefined);
  }
}

async function main() {
  console.log(`load average at start: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  try {
    if (!args['skip-batch']) await batchPart();
    if (!args['skip-broadcast']) await broadcastPart();
  } finally {
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
    console.log(`load average at the end: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
