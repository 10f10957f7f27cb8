#!/usr/bin/env node
// bench/automations (issue 13): real processes (NATS, subscriber, messaging with its delivery worker,
// gateway, a local SMTP sink). Three figures:
// 1. Backlog: `--events` custom events (default 200,000, for `--addresses` subscribers in turn) in
//    `--rounds` rounds after a warm-up: each round's events are published while the messaging service
//    is stopped (SIGSTOP), a bare nats.js pull consumer that only acks (its own process) takes them,
//    then the service continues (SIGCONT) and the time until its events consumer has recorded (and
//    matched against the automations) all of them (`messaging_custom_events_total`) is measured, with
//    the CPU per event of every process. Target (issue 26): >= 8,000/s; <= 120 µs messaging CPU per event.
// 2. Latency at `--rate` events/s (default 100) for `--seconds`: from the 202 of POST /events to the
//    automation's mail at the sink (matched by subject). Target: p99 < 2 s.
// 3. `--waiting` runs (default 100,000) waiting at once: messaging RSS, then a restart (kill, start on
//    the same data) and the time until all of them resumed (their WAIT ends during the restart).
// Usage: npm run bench:automations [-- --events 200000 --rounds 2 --addresses 100 --rate 100 --seconds 20 --waiting 100000 --wait-seconds 120 --parts backlog,latency,waiting]
//   (BENCH_PROFILE=<dir>: CPU profile of messaging)
'use strict';
const { parseArgs } = require('node:util');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { connect, JSONCodec } = require('nats');
const { ensureStreams } = require('@mailer/nats');
const { freePort, spawnReady, startNatsServer, startService, startGateway, operatorAuth } = require('@mailer/testing');
const { verdict, benchAccount, rssMb, cpuSeconds, forkChild, median, startSmtpSink } = require('./lib');

const { values: args } = parseArgs({
  options: {
    events: { type: 'string', default: '200000' },
    rounds: { type: 'string', default: '2' },
    warmup: { type: 'string', default: '5000' },
    addresses: { type: 'string', default: '100' },
    parts: { type: 'string', default: 'backlog,latency,waiting' },
    rate: { type: 'string', default: '100' },
    seconds: { type: 'string', default: '20' },
    waiting: { type: 'string', default: '100000' },
    'wait-seconds': { type: 'string', default: '120' },
  },
});
const rounds = Number(args.rounds);
const perRound = Math.ceil(Number(args.events) / rounds);
const addresses = Number(args.addresses);
const parts = new Set(args.parts.split(','));
const rate = Number(args.rate);
const latencyTotal = rate * Number(args.seconds);
const waitingRuns = Number(args.waiting);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A sink recording the arrival time of each mail by subject. */
async function startSink() {
  const arrivals = new Map();
  const sink = await startSmtpSink({
    onMail: (_envelope, head) => {
      const m = head.match(/^Subject: (.*)$/m);
      if (m) arrivals.set(m[1].trim(), Date.now());
    },
  });
  return { ...sink, arrivals };
}

/** The sum of a metric's samples, but those whose labels include `except`. */
async function metric(port, name, except) {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) if (line.startsWith(name) && !(except && line.includes(except))) sum += Number(line.split(' ').pop());
  return sum;
}

/** Publishes `count` events of `eventKey` straight to EVENTS (as the gateway stores them), for `email` or the addresses it returns in turn. */
async function publishEvents(natsUrl, accountId, email, eventKey, count) {
  const nc = await connect({ servers: natsUrl, ...operatorAuth });
  await ensureStreams(nc);
  const js = nc.jetstream();
  const codec = JSONCodec();
  const now = new Date().toISOString();
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const eventId = crypto.randomUUID();
      const to = typeof email === 'function' ? email(i) : email;
      await js.publish(`events.${accountId}`, codec.encode({ eventId, accountId, eventKey, email: to, occurredAt: now, receivedAt: now, triggerAutomations: true, properties: { n: i }, consent: null }), { msgID: eventId });
    }
  };
  await Promise.all(Array.from({ length: 256 }, worker));
  await nc.close();
}

async function main() {
  const stops = [];
  try {
    const nats = await startNatsServer();
    stops.push(() => nats.stop());
    const sink = await startSink();
    stops.push(() => sink.close());
    const messagingAddress = `127.0.0.1:${await freePort()}`;
    const subscriber = await startService('subscriber', { NATS_URL: nats.url, MESSAGING_GRPC_ADDR: messagingAddress });
    stops.push(() => subscriber.stop());
    const gw = await startGateway({ NATS_URL: nats.url, SUBSCRIBER_GRPC_ADDR: subscriber.address, MESSAGING_GRPC_ADDR: messagingAddress });
    stops.push(() => gw.stop());
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailer-bench-messaging-'));
    const messagingEnv = {
      LOG_LEVEL: 'info', METRICS_PORT: '0', NATS_URL: nats.url, DATA_DIR: dataDir, MESSAGING_GRPC_ADDR: messagingAddress,
      MESSAGING_HTTP_ADDR: `127.0.0.1:${await freePort()}`, BOUNCE_SMTP_PORT: String(await freePort()), SUBSCRIBER_GRPC_ADDR: subscriber.address,
      TRACKING_SECRET: crypto.randomBytes(32).toString('base64url'), SMTP_URL: sink.url, MAIL_ACCOUNT_RATE_PER_SECOND: '100000',
      // profile the service alone: BENCH_PROFILE=/tmp/prof npm run bench:automations
      ...(process.env.BENCH_PROFILE ? { NODE_EXEC_ARGS: `--cpu-prof --cpu-prof-dir=${process.env.BENCH_PROFILE}` } : {}),
    };
    let messaging = null;
    stops.push(() => (messaging ? messaging.stop() : Promise.resolve()));
    const account = await benchAccount(gw, 'bench-automations');
    await account.call('POST', '/subscribers', { email: 'ann@example.org', firstName: 'Ann' });
    const readers = Array.from({ length: addresses }, (_, i) => ({ email: `reader${i}@example.org`, firstName: `Reader ${i}` }));
    for (let i = 0; i < readers.length; i += 1000) await account.call('POST', '/subscribers/sync', { mode: 'CREATE_ONLY', subscribers: readers.slice(i, i + 1000) });
    messaging = await spawnReady('services/messaging/dist/main.js', messagingEnv, 120_000);
    const metricsPort = messaging.ready.metricsPort;

    // 1. backlog, in rounds: the events published while messaging is stopped, the bare consumer, then messaging
    const acker = await forkChild('./ack-consumer', { ...process.env, NATS_USER: operatorAuth.user, NATS_PASSWORD: operatorAuth.pass });
    stops.push(() => acker.stop());
    const jsm = await (await connect({ servers: nats.url, ...operatorAuth })).jetstreamManager();
    let recorded = 0;
    const backlogRound = async (count) => {
      const startSeq = (await jsm.streams.info('EVENTS')).state.last_seq + 1;
      process.kill(messaging.pid, 'SIGSTOP');
      let raw;
      try {
        await publishEvents(nats.url, account.accountId, (i) => readers[i % readers.length].email, 'bench.backlog', count);
        raw = await acker.call({ natsUrl: nats.url, stream: 'EVENTS', filter: 'events.>', startSeq, count });
      } finally {
        process.kill(messaging.pid, 'SIGCONT');
      }
      recorded += count;
      const cpu0 = { messaging: cpuSeconds(messaging.pid), subscriber: cpuSeconds(subscriber.pid), nats: cpuSeconds(nats.pid) };
      const calls0 = await metric(subscriber.ready.metricsPort, 'grpc_server_handled_total');
      const started = Date.now();
      // (an event the stopped service had been handed may come back after its ack wait: counted once)
      while ((await metric(metricsPort, 'messaging_custom_events_total', 'outcome="duplicate"')) < recorded) await sleep(50);
      const seconds = (Date.now() - started) / 1000;
      const perEvent = (name, pid) => ((cpuSeconds(pid) - cpu0[name]) * 1e6) / count;
      return {
        rate: count / seconds,
        raw: { rate: (count * 1000) / raw.ms, cpuUs: raw.cpuUs / count },
        cpuUs: { messaging: perEvent('messaging', messaging.pid), subscriber: perEvent('subscriber', subscriber.pid), nats: perEvent('nats', nats.pid) },
        // the subscriber lookups it took (calls the subscriber service answered, per event)
        subscriberCalls: ((await metric(subscriber.ready.metricsPort, 'grpc_server_handled_total')) - calls0) / count,
      };
    };
    const backlog = [];
    if (parts.has('backlog')) {
      await backlogRound(Number(args.warmup));
      for (let r = 1; r <= rounds; r++) {
        const round = await backlogRound(perRound);
        backlog.push(round);
        console.log(`round ${r}: ack-only consumer ${Math.round(round.raw.rate)} events/s (${Math.round(round.raw.cpuUs)} µs/event) | messaging ${Math.round(round.rate)} recorded+matched events/s, CPU µs/event ${JSON.stringify(Object.fromEntries(Object.entries(round.cpuUs).map(([k, v]) => [k, Math.round(v)])))}, subscriber calls/event ${round.subscriberCalls.toFixed(3)}`);
      }
    }
    console.log(`\nbench/automations (${os.cpus().length} cores, load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')})`);
    if (backlog.length) {
      const consumed = median(backlog.map((x) => x.rate));
      const us = median(backlog.map((x) => x.cpuUs.messaging));
      const mem = rssMb(messaging.pid);
      console.log(`backlog, ${rounds} rounds of ${perRound} events for ${addresses} subscribers: ${Math.round(consumed)} recorded+matched events/s (target >= 8,000: ${verdict(consumed >= 8000)}), ` +
        `ack-only consumer ${Math.round(median(backlog.map((x) => x.raw.rate)))}/s (ratio ${(consumed / median(backlog.map((x) => x.raw.rate))).toFixed(3)})`);
      console.log(`  messaging CPU ${Math.round(us)} µs per event (target <= 120: ${verdict(us <= 120)}); subscriber ${Math.round(median(backlog.map((x) => x.cpuUs.subscriber)))} µs (${median(backlog.map((x) => x.subscriberCalls)).toFixed(3)} calls per event), NATS ${Math.round(median(backlog.map((x) => x.cpuUs.nats)))} µs, ack-only consumer ${Math.round(median(backlog.map((x) => x.raw.cpuUs)))} µs; messaging RSS ${mem.rss} MB (peak ${mem.peak} MB)`);
    }

    // 2. latency: an automation mailing every event, events posted on a fixed schedule
    if (parts.has('latency')) {
      await account.call('POST', '/sender-profiles', { name: 'Shop', fromEmail: 'shop@example.com', fromName: 'The Shop' });
      await account.call('POST', '/email-templates', { name: 'thanks', subject: 'Thanks {{ event.properties.n }}', html: '<p>Thanks {{ event.properties.n }}</p>' });
      await account.call('POST', '/automations', { name: 'Thanks', trigger: { type: 'API_REQUEST', eventKey: 'order.paid' }, steps: [{ type: 'SEND_EMAIL', templateName: 'thanks' }], active: true });
      const sentAt = new Map();
      const pending = [];
      const statuses = {};
      const t0 = Date.now();
      for (let i = 0; i < latencyTotal; i++) {
        const wait = t0 + (i * 1000) / rate - Date.now();
        if (wait > 1) await sleep(wait);
        const n = `L${i}`;
        pending.push(
          fetch(`${gw.url}/events`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': account.apiKey }, body: JSON.stringify({ eventKey: 'order.paid', email: 'ann@example.org', properties: { n } }) })
            .then(async (res) => {
              await res.arrayBuffer();
              statuses[res.status] = (statuses[res.status] || 0) + 1;
              if (res.status === 202) sentAt.set(`Thanks ${n}`, Date.now());
            })
            .catch(() => undefined),
        );
      }
      await Promise.all(pending);
      let last = -1;
      let quietSince = Date.now();
      for (;;) {
        const arrived = [...sentAt.keys()].filter((s) => sink.arrivals.has(s)).length;
        if (arrived === sentAt.size) break;
        if (arrived !== last) (last = arrived), (quietSince = Date.now());
        else if (Date.now() - quietSince > 10_000) break;
        await sleep(200);
      }
      const lat = [...sentAt].filter(([s]) => sink.arrivals.has(s)).map(([s, t]) => sink.arrivals.get(s) - t).sort((x, y) => x - y);
      const pct = (p) => (lat.length ? lat[Math.min(lat.length - 1, Math.floor((p / 100) * lat.length))] : NaN);
      const latency = { accepted: sentAt.size, arrived: lat.length, p50: pct(50), p95: pct(95), p99: pct(99), max: lat[lat.length - 1] };
      console.log(`\nPOST /events 202 -> automation mail at the sink, ${latencyTotal} events at ${rate}/s (statuses ${JSON.stringify(statuses)})`);
      console.table({ 'latency (ms)': latency });
      console.log(`  p99 ${latency.p99} ms (target < 2000: ${verdict(latency.p99 < 2000 && latency.arrived === latency.accepted)})`);
    }

    // 3. many waiting runs: each waits, then tags the subscriber (one cheap gRPC call)
    if (parts.has('waiting')) {
      const tag = await account.call('POST', '/tags', { name: 'waited' });
      const waitSeconds = Number(args['wait-seconds']);
      const auto = await account.call('POST', '/automations', { name: 'Wait', trigger: { type: 'API_REQUEST', eventKey: 'bench.wait' }, steps: [{ type: 'WAIT', duration: `PT${waitSeconds}S` }, { type: 'ADD_TAGS', tagIds: [tag.id] }], active: true });
      const runsWith = async (status) => (await account.call('GET', `/automations/${auto.id}/runs?status=${status}&pageSize=1`)).totalItems;
      const fillStarted = Date.now();
      await publishEvents(nats.url, account.accountId, 'ann@example.org', 'bench.wait', waitingRuns);
      // (a run whose wait ended before the last one started is COMPLETED already)
      let waitingNow = 0;
      for (;;) {
        waitingNow = await runsWith('WAITING');
        if (waitingNow + (await runsWith('COMPLETED')) >= waitingRuns) break;
        await sleep(500);
      }
      const fillSeconds = (Date.now() - fillStarted) / 1000;
      const waitingRss = rssMb(messaging.pid);
      // restart so that the first waits end while the service is down
      const firstDue = fillStarted + waitSeconds * 1000;
      await messaging.stop();
      messaging = null;
      if (Date.now() < firstDue) await sleep(firstDue - Date.now());
      const restartAt = Date.now();
      messaging = await spawnReady('services/messaging/dist/main.js', messagingEnv, 300_000);
      const readySeconds = (Date.now() - restartAt) / 1000;
      while ((await runsWith('COMPLETED')) < waitingRuns) await sleep(500);
      const resumedSeconds = (Date.now() - restartAt) / 1000;

      console.log(`\n${waitingRuns} runs started in ${fillSeconds.toFixed(1)} s, ${waitingNow} waiting at once: messaging RSS ${waitingRss.rss} MB (peak ${waitingRss.peak} MB)`);
      console.log(`  restart on the same data: ready in ${readySeconds.toFixed(1)} s, every due run resumed and completed ${resumedSeconds.toFixed(1)} s after the start`);
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
