#!/usr/bin/env node
// bench/email-delivery (issue 11, bench/email.js part 2): delivered messages per second into a local
// SMTP sink through the delivery worker (JOBS consumer -> claim -> pooled nodemailer -> outcome,
// facts through the outbox, embedded store), beside the raw rate of one pooled nodemailer transport
// sending pre-rendered messages to the same sink in the same run. Target: ratio >= 0.5.
// The worker runs as its own process with the production wiring (services/messaging/test/support/
// delivery-worker.js, over the built dist/), seeded with the stored messages and their jobs, as the
// accepting use case leaves them; once POST /email-messages is merged bench/email.js can feed it
// through the gateway instead.
// Usage: npm run bench:email-delivery [-- --messages 3000 --pool 5 --concurrency 20]
'use strict';
const { parseArgs } = require('node:util');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
// The very nodemailer the messaging service runs (its own dependency, not whatever is hoisted).
const nodemailer = require(require.resolve('nodemailer', { paths: [path.join(__dirname, '..', 'services', 'messaging')] }));
const { SMTPServer } = require('smtp-server');
const { freePort, spawnReady, startNatsServer, processCredentials } = require('@mailer/testing');
const { verdict, rssMb, cpuSeconds } = require('./lib');

const { values: args } = parseArgs({
  options: { messages: { type: 'string', default: '3000' }, pool: { type: 'string', default: '5' }, concurrency: { type: 'string', default: '20' } },
});
const count = Number(args.messages);
const pool = Number(args.pool);
const concurrency = Number(args.concurrency);

/** A sink that accepts everything and only counts (no parsing: the sink must not be what is measured). */
async function startSink() {
  const port = await freePort();
  const times = [];
  let waiter;
  const server = new SMTPServer({
    logger: false,
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    maxClients: 1000,
    onData(stream, _session, callback) {
      stream.on('data', () => undefined);
      stream.on('end', () => {
        times.push(Date.now());
        if (waiter && times.length >= waiter.n) waiter.resolve();
        callback(null, 'Ok');
      });
    },
  });
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `smtp://127.0.0.1:${port}`,
    times,
    reset: () => (times.length = 0),
    until: (n) => (times.length >= n ? Promise.resolve() : new Promise((resolve) => (waiter = { n, resolve }))),
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** Messages per second between the first and the last arrival. */
const rateOf = (times) => Math.round(((times.length - 1) * 1000) / Math.max(1, times[times.length - 1] - times[0]));

/** One pooled transport, `concurrency` sends outstanding, pre-rendered messages. */
async function rawNodemailer(url, n) {
  const transport = nodemailer.createTransport({ url, pool: true, maxConnections: pool, maxMessages: Infinity });
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      await transport.sendMail({
        from: { name: 'Shop', address: 'shop@example.com' },
        to: `raw${i}@example.org`,
        subject: `Receipt ${i}`,
        html: `<p>Receipt ${i}</p>`,
        text: `Receipt ${i}`,
        messageId: `<${crypto.randomUUID()}@example.com>`,
        envelope: { from: 'bounce@bounces.localhost', to: [`raw${i}@example.org`] },
      });
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  transport.close();
}

async function main() {
  const stops = [];
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailer-bench-delivery-'));
  stops.push(async () => fs.rmSync(dataDir, { recursive: true, force: true }));
  try {
    const nats = await startNatsServer();
    stops.push(() => nats.stop());
    const sink = await startSink();
    stops.push(() => sink.close());

    // Raw floor first (warm-up of 200, then the measured run).
    await rawNodemailer(sink.url, 200);
    sink.reset();
    const rawCpu = process.cpuUsage();
    await rawNodemailer(sink.url, count);
    const rawCpuUs = Object.values(process.cpuUsage(rawCpu)).reduce((a, b) => a + b, 0) / count;
    const raw = rateOf(sink.times);
    sink.reset();

    const worker = await spawnReady(
      'services/messaging/test/support/delivery-worker.js',
      {
        ...processCredentials('messaging'),
        NATS_URL: nats.url,
        DATA_DIR: dataDir,
        SMTP_URL: sink.url,
        SMTP_POOL_SIZE: String(pool),
        MAIL_SEND_CONCURRENCY: String(concurrency),
        MAIL_ACCOUNT_RATE_PER_SECOND: '100000',
        TRACKING_SECRET: crypto.randomBytes(32).toString('base64url'),
        SEED_COUNT: String(count),
        SEED_ACCOUNT: crypto.randomUUID(),
        NODE_OPTIONS: '--max-old-space-size=256',
      },
      120_000,
    );
    stops.unshift(() => worker.stop());
    const cpuBefore = cpuSeconds(worker.pid);
    const sinkCpu = process.cpuUsage();
    const wallBefore = Date.now();
    await sink.until(count);
    const cpuUsed = cpuSeconds(worker.pid) - cpuBefore;
    // This process only runs the sink now: its CPU per message is the sink's share of the raw figure.
    const sinkCpuUs = Object.values(process.cpuUsage(sinkCpu)).reduce((a, b) => a + b, 0) / count;
    const rawClientUs = Math.max(1, rawCpuUs - sinkCpuUs);
    const workerUs = (cpuUsed * 1e6) / count;
    const wall = (Date.now() - wallBefore) / 1000;
    const delivered = rateOf(sink.times);
    const mem = rssMb(worker.pid);

    const ratio = delivered / raw;
    console.log(`messages: ${count}, pool ${pool} connections, ${concurrency} sends in flight`);
    console.log(`raw nodemailer (pooled, pre-rendered) : ${raw} msg/s   (client and sink CPU ${Math.round(rawCpuUs)} µs/msg)`);
    console.log(`delivery worker (job -> SMTP -> DELIVERED + facts): ${delivered} msg/s   (worker CPU ${Math.round((cpuUsed * 1e6) / count)} µs/msg, ${Math.round((cpuUsed / wall) * 100)}% of a core; RSS ${mem.rss} MB, peak ${mem.peak} MB)`);
    console.log(`ratio: ${ratio.toFixed(2)} (target >= 0.5) ${verdict(ratio >= 0.5)}`);
    // On a shared 2-core machine the rates swing with other load; CPU per message does not.
    console.log(`CPU per message: raw nodemailer client ${Math.round(rawClientUs)} µs (sink ${Math.round(sinkCpuUs)} µs) vs delivery worker ${Math.round(workerUs)} µs -> CPU ratio ${(rawClientUs / workerUs).toFixed(2)} (what the rate ratio is when both are CPU-bound on one core each)`);
  } finally {
    for (const stop of stops) await stop().catch(() => undefined);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
