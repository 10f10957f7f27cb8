#!/usr/bin/env node
// bench/email-delivery: delivered mails per second from a backlog of email jobs through the delivery
// worker (JOBS consumer -> batch claim -> pooled nodemailer -> batch settle: DELIVERED, facts through
// the outbox), beside one pooled nodemailer transport sending the same pre-rendered mails.
// Like with like: the worker, the baseline sender and the SMTP sink are each a process of their own;
// after a warm-up of both, rounds alternate (baseline, worker, baseline, worker, ...) and each prints
// its rate beside the CPU per mail of every process. Target (issue 26): ratio >= 0.6, worker CPU
// <= 350 µs per mail.
// The worker is services/messaging/test/support/delivery-worker.js: the production wiring (consumer,
// use case, pooled transport, outbox relay over the built dist/) on its own embedded store, seeded
// here with QUEUED messages and bodies as the accepting use case leaves them. A worker round
// publishes its jobs while the worker is stopped (SIGSTOP), then lets it run (SIGCONT): the rate is
// from there to the last mail at the sink, the CPU from there until its last fact is published.
// Usage: npm run bench:email-delivery [-- --messages 10000 --rounds 2 --pool 5 --concurrency 20]
//   (BENCH_PROFILE=<dir>: CPU profile of the worker)
'use strict';
const { parseArgs } = require('node:util');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { connect } = require('nats');
const { openStore } = require('@mailer/store');
const { ensureStreams } = require('@mailer/nats');
const { job } = require('@mailer/nats/facts');
const { spawnReady, startNatsServer, processCredentials, operatorAuth } = require('@mailer/testing');
const { messageCollections, messagesOf, noEngagementYet } = require('../services/messaging/dist/mail/store/messages');
const { verdict, rssMb, cpuSeconds, startSink, startNodemailerSender, median } = require('./lib');

const { values: args } = parseArgs({
  options: {
    messages: { type: 'string', default: '10000' },
    rounds: { type: 'string', default: '2' },
    warmup: { type: 'string', default: '500' },
    pool: { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '20' },
  },
});
const rounds = Number(args.rounds);
const perRound = Math.ceil(Number(args.messages) / rounds);
const warmup = Number(args.warmup);
const pool = Number(args.pool);
const concurrency = Number(args.concurrency);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Stores `count` QUEUED messages with their bodies (what POST /email-messages leaves), in transactions of 1,000; their ids. */
async function seed(dataDir, accountId, count) {
  const store = await openStore({ dataDir });
  const ids = [];
  try {
    const repo = messagesOf(messageCollections(store), accountId);
    for (let i = 0; i < count; i += 1000) {
      const page = [];
      for (let j = i; j < Math.min(count, i + 1000); j++) {
        const now = new Date();
        const _id = crypto.randomUUID();
        ids.push(_id);
        page.push({
          message: {
            _id, kind: 'TRANSACTIONAL', templateName: 'receipt', email: `rcpt${j}@example.org`, subscriberId: null, topicId: null,
            senderProfileId: 'p1', fromEmail: 'shop@example.com', fromName: 'Shop', replyTo: null, subject: `Receipt ${j}`, links: [],
            tracking: { opens: false, clicks: false }, status: 'QUEUED', suppressionReason: null, history: [{ status: 'QUEUED', at: now }],
            attempts: [], nextAttemptAt: null, createdAt: now, sentAt: null, deliveredAt: null, bouncedAt: null, complainedAt: null,
            ...noEngagementYet(), eventProperties: null,
          },
          body: { html: `<p>Receipt ${j}</p>`, text: `Receipt ${j}`, headers: {} },
        });
      }
      await store.transaction((tx) => repo.insertMany(page, tx));
    }
  } finally {
    await store.close();
  }
  return ids;
}

/** The worker's store counters (it prints them on SIGUSR2). */
async function storeStats(worker) {
  const seen = worker.output().length;
  process.kill(worker.pid, 'SIGUSR2');
  for (let i = 0; i < 100; i++) {
    const line = worker.output().slice(seen).split('\n').find((l) => l.includes('"msg":"store stats"'));
    if (line) return JSON.parse(line);
    await sleep(20);
  }
  throw new Error('the worker did not report its store stats');
}

async function main() {
  const stops = [];
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailer-bench-delivery-'));
  stops.push(async () => fs.rmSync(dataDir, { recursive: true, force: true }));
  try {
    const nats = await startNatsServer();
    stops.unshift(() => nats.stop());
    const sink = await startSink();
    stops.unshift(() => sink.close());
    const sender = await startNodemailerSender();
    stops.unshift(() => sender.close());

    const accountId = crypto.randomUUID();
    const ids = await seed(dataDir, accountId, warmup + rounds * perRound);
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
        NODE_OPTIONS: '--max-old-space-size=256',
        ...(process.env.BENCH_PROFILE ? { NODE_EXEC_ARGS: `--cpu-prof --cpu-prof-dir=${process.env.BENCH_PROFILE}` } : {}),
      },
      120_000,
    );
    stops.unshift(() => worker.stop());

    const nc = await connect({ servers: nats.url, ...operatorAuth, noAsyncTraces: true });
    stops.unshift(() => nc.close());
    await ensureStreams(nc);
    const js = nc.jetstream();
    const jsm = await nc.jetstreamManager();
    const factsPublished = async () => (await jsm.streams.info('DOMAIN')).state.messages;
    let next = 0;
    let delivered = 0;

    /** Sends `n` pre-rendered mails with the baseline: {rate, cpu µs per mail of the sender and the sink}. */
    async function baselineRound(n) {
      await sink.reset();
      const cpu0 = cpuSeconds(sender.pid);
      const started = Date.now();
      await sender.send({ url: sink.url, n, pool, concurrency, mail: 'receipt', prefix: `raw${started}-` });
      const at = await sink.stats();
      return { rate: (n * 1000) / (at.last - started), cpuUs: ((cpuSeconds(sender.pid) - cpu0) * 1e6) / n, sinkUs: at.cpuUs / n };
    }

    /** Publishes the jobs of the next `n` messages while the worker is stopped, then lets it deliver them. */
    async function workerRound(n) {
      const round = ids.slice(next, next + n);
      next += n;
      process.kill(worker.pid, 'SIGSTOP');
      try {
        await Promise.all(round.map((messageId) => {
          const j = job('email', { accountId, messageId });
          return js.publish(j.subject, Buffer.from(JSON.stringify(j.payload)), { msgID: messageId });
        }));
      } finally {
        await sink.reset();
        process.kill(worker.pid, 'SIGCONT');
      }
      const cpu0 = cpuSeconds(worker.pid);
      const started = Date.now();
      const at = await sink.until(n);
      const sinkUs = (await sink.stats()).cpuUs / n;
      delivered += n;
      // email.sent and email.delivered per mail: the round is done once its facts are out
      while ((await factsPublished()) < 2 * delivered) await sleep(20);
      return { rate: (n * 1000) / (at.last - started), cpuUs: ((cpuSeconds(worker.pid) - cpu0) * 1e6) / n, sinkUs, factsMs: Date.now() - started };
    }

    await baselineRound(warmup);
    await workerRound(warmup);
    const stats0 = await storeStats(worker);
    const results = [];
    for (let r = 1; r <= rounds; r++) {
      const baseline = await baselineRound(perRound);
      const system = await workerRound(perRound);
      results.push({ baseline, system });
      console.log(
        `round ${r}: nodemailer ${Math.round(baseline.rate)} mails/s (${Math.round(baseline.cpuUs)} µs/mail; sink ${Math.round(baseline.sinkUs)}) | ` +
          `delivery worker ${Math.round(system.rate)} mails/s (${Math.round(system.cpuUs)} µs/mail; sink ${Math.round(system.sinkUs)}; facts out after ${(system.factsMs / 1000).toFixed(1)} s) | ratio ${(system.rate / baseline.rate).toFixed(2)}`,
      );
    }
    const stats1 = await storeStats(worker);
    const mem = rssMb(worker.pid);
    const mails = rounds * perRound;
    const rate = { baseline: median(results.map((x) => x.baseline.rate)), system: median(results.map((x) => x.system.rate)) };
    const cpu = { baseline: median(results.map((x) => x.baseline.cpuUs)), system: median(results.map((x) => x.system.cpuUs)) };
    const ratios = results.map((x) => x.system.rate / x.baseline.rate);
    const ratio = median(ratios);

    console.log(`\nbench/email-delivery: ${rounds} rounds of ${perRound} mails each way (after ${warmup} of each), pool ${pool} connections, ${concurrency} sends in flight; load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}`);
    console.table({
      'delivery worker (job -> SMTP -> DELIVERED + facts)': { 'mails/s': Math.round(rate.system), 'CPU µs/mail': Math.round(cpu.system) },
      'nodemailer, pooled, pre-rendered': { 'mails/s': Math.round(rate.baseline), 'CPU µs/mail': Math.round(cpu.baseline) },
    });
    console.log(`ratio (median of rounds ${ratios.map((x) => x.toFixed(2)).join(', ')}): ${ratio.toFixed(2)} (target >= 0.6) ${verdict(ratio >= 0.6)}`);
    console.log(`worker CPU per mail: ${Math.round(cpu.system)} µs (target <= 350) ${verdict(cpu.system <= 350)}; CPU ratio baseline/worker ${(cpu.baseline / cpu.system).toFixed(2)}`);
    console.log(
      `per delivered mail: ${((stats1.commits - stats0.commits) / mails).toFixed(2)} store commits, ${((stats1.documentWrites - stats0.documentWrites) / mails).toFixed(2)} document writes ` +
        `(from the job to DELIVERED, the outbox included), JetStream messages ${(1 + (await factsPublished()) / (warmup + mails)).toFixed(2)} (the job, email.sent, email.delivered)`,
    );
    console.log(`worker RSS ${mem.rss} MB, peak ${mem.peak} MB`);
  } finally {
    for (const stop of stops) await stop().catch(() => undefined);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
