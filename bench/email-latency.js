#!/usr/bin/env node
// bench/email-latency (issue 11): time from the 202 of POST /email-messages to the message arriving at
// a local SMTP sink, at a steady open-loop rate (default 200 messages/s: requests start on a fixed
// schedule, not as fast as the system answers). Real processes: NATS, subscriber, messaging (with its
// delivery worker), gateway. Each message has its own recipient address; the sink matches arrivals by
// the envelope recipient. Beside it, in the same run: one pooled nodemailer transport sending at the
// same rate to the same sink, latency from sendMail() to arrival (the baseline). Target: p99 < 2 s.
// Usage: npm run bench:email-latency [-- --rate 200 --seconds 20]
'use strict';
const { parseArgs } = require('node:util');
const path = require('node:path');
const crypto = require('node:crypto');
const nodemailer = require(require.resolve('nodemailer', { paths: [path.join(__dirname, '..', 'services', 'messaging')] }));
const { startNatsServer, startService, startGateway } = require('@mailer/testing');
const { verdict, benchAccount, rssMb, startSmtpSink } = require('./lib');

const { values: args } = parseArgs({ options: { rate: { type: 'string', default: '200' }, seconds: { type: 'string', default: '20' } } });
const rate = Number(args.rate);
const total = rate * Number(args.seconds);

/** A sink recording the arrival time of each envelope recipient. */
async function startSink() {
  const arrivals = new Map();
  const sink = await startSmtpSink({
    onMail: (envelope) => {
      const now = Date.now();
      for (const rcpt of envelope.rcptTo) arrivals.set(rcpt.address.toLowerCase(), now);
    },
  });
  return { ...sink, arrivals };
}

/** Calls send(i) every 1000/rate ms on a fixed schedule; resolves with {address: start time} once all are sent. */
async function openLoop(prefix, send) {
  const started = Date.now();
  const sentAt = new Map();
  const pending = [];
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - Date.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    const address = `${prefix}${i}@example.org`;
    pending.push(send(i, address).then((t) => t && sentAt.set(address, t), () => undefined));
  }
  await Promise.all(pending);
  return { sentAt, sendSeconds: (Date.now() - started) / 1000 };
}

/** Waits until every sent address arrived or nothing new arrived for 10 s; percentiles of arrival - sent. */
async function summarise(sink, sentAt) {
  let last = -1;
  let quietSince = Date.now();
  for (;;) {
    const arrived = [...sentAt.keys()].filter((a) => sink.arrivals.has(a)).length;
    if (arrived === sentAt.size) break;
    if (arrived !== last) (last = arrived), (quietSince = Date.now());
    else if (Date.now() - quietSince > 10_000) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const lat = [...sentAt].filter(([a]) => sink.arrivals.has(a)).map(([a, t]) => sink.arrivals.get(a) - t).sort((x, y) => x - y);
  const pct = (p) => (lat.length ? lat[Math.min(lat.length - 1, Math.floor((p / 100) * lat.length))] : NaN);
  return { accepted: sentAt.size, arrived: lat.length, p50: pct(50), p95: pct(95), p99: pct(99), max: lat[lat.length - 1] };
}

async function main() {
  const stops = [];
  try {
    const nats = await startNatsServer();
    stops.push(() => nats.stop());
    const sink = await startSink();
    stops.push(() => sink.close());
    const subscriber = await startService('subscriber', { NATS_URL: nats.url });
    stops.push(() => subscriber.stop());
    const messaging = await startService('messaging', { NATS_URL: nats.url, SUBSCRIBER_GRPC_ADDR: subscriber.address, SMTP_URL: sink.url, MAIL_ACCOUNT_RATE_PER_SECOND: '100000' });
    stops.push(() => messaging.stop());
    const gw = await startGateway({ NATS_URL: nats.url, SUBSCRIBER_GRPC_ADDR: subscriber.address, MESSAGING_GRPC_ADDR: messaging.address });
    stops.push(() => gw.stop());
    const account = await benchAccount(gw, 'bench-email-latency');
    await account.call('POST', '/sender-profiles', { name: 'Shop', fromEmail: 'shop@example.com', fromName: 'The Shop' });
    await account.call('POST', '/email-templates', { name: 'receipt', subject: 'Receipt {{ n }}', html: '<p>Receipt {{ n }}</p><a href="https://shop.example/r/{{ n }}">See it</a>' });

    const baseline = nodemailer.createTransport({ url: sink.url, pool: true, maxConnections: 5, maxMessages: Infinity });
    const raw = await openLoop('raw', async (i, address) => {
      const t = Date.now();
      sink.arrivals.delete(address);
      baseline.sendMail({ from: 'shop@example.com', to: address, subject: `Receipt ${i}`, html: `<p>Receipt ${i}</p>`, messageId: `<${crypto.randomUUID()}@example.com>` }).catch(() => undefined);
      return t;
    });
    const rawStats = await summarise(sink, raw.sentAt);
    baseline.close();

    const statuses = {};
    const mailer = await openLoop('m', async (i, address) => {
      const res = await fetch(`${gw.url}/email-messages`, {
        method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': account.apiKey },
        body: JSON.stringify({ name: 'receipt', email: address, substitutionData: { n: String(i) } }),
      });
      await res.arrayBuffer();
      statuses[res.status] = (statuses[res.status] || 0) + 1;
      return res.status === 202 ? Date.now() : undefined;
    });
    const stats = await summarise(sink, mailer.sentAt);

    console.log(`\nbench/email-latency: ${total} messages at ${rate}/s open loop (sending took ${mailer.sendSeconds.toFixed(1)} s; statuses ${JSON.stringify(statuses)})`);
    console.table({
      'gateway 202 -> SMTP sink (ms)': stats,
      'one pooled nodemailer, sendMail -> sink (ms)': rawStats,
    });
    console.log(`p99 202 -> sink: ${stats.p99} ms (target < 2000: ${verdict(stats.p99 < 2000 && stats.arrived === stats.accepted)}); messaging RSS ${rssMb(messaging.pid).rss} MB`);
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
