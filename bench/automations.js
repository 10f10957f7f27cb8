#!/usr/bin/env node
// bench/automations (issue 13): real processes (NATS, subscriber, messaging with its delivery worker,
// gateway, a local SMTP sink). Three figures:
// 1. Backlog: `--events` custom events (default 200,000) published to EVENTS before messaging starts,
//    then the time until its events consumer has recorded (and matched against the automations) all of
//    them (`messaging_custom_events_total`), beside a bare nats.js pull consumer that only acks the same
//    stream in the same run. Target: >= 0.25 of it and >= 3,000/s.
// 2. Latency at `--rate` events/s (default 100) for `--seconds`: from the 202 of POST /events to the
//    automation's mail at the sink (matched by subject). Target: p99 < 2 s.
// 3. `--waiting` runs (default 100,000) waiting at once: messaging RSS, then a restart (kill, start on
//    the same data) and the time until all of them resumed (their WAIT ends during the restart).
// Usage: npm run bench:automations [-- --events 200000 --rate 100 --seconds 20 --waiting 100000 --wait-seconds 120]
'use strict';
const { parseArgs } = require('node:util');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { connect, JSONCodec, AckPolicy, DeliverPolicy } = require('nats');
const { ensureStreams } = require('@mailer/nats');
const { SMTPServer } = require('smtp-server');
const { freePort, spawnReady, startNatsServer, startService, startGateway, operatorAuth } = require('@mailer/testing');
const { verdict, benchAccount, rssMb, cpuSeconds } = require('./lib');

const { values: args } = parseArgs({
  options: {
    events: { type: 'string', default: '200000' },
    rate: { type: 'string', default: '100' },
    seconds: { type: 'string', default: '20' },
    waiting: { type: 'string', default: '100000' },
    'wait-seconds': { type: 'string', default: '120' },
  },
});
const backlogSize = Number(args.events);
const rate = Number(args.rate);
const latencyTotal = rate * Number(args.seconds);
const waitingRuns = Number(args.waiting);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A sink recording the arrival time of each mail by subject. */
async function startSink() {
  const port = await freePort();
  const arrivals = new Map();
  const server = new SMTPServer({
    logger: false, authOptional: true, disabledCommands: ['AUTH', 'STARTTLS'], maxClients: 1000,
    onData(stream, _session, callback) {
      let head = '';
      stream.on('data', (chunk) => {
        if (head.length < 8192) head += chunk.toString();
      });
      stream.on('end', () => {
        const m = head.match(/^Subject: (.*)$/m);
        if (m) arrivals.set(m[1].trim(), Date.now());
        callback(null, 'Ok');
      });
    },
  });
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { url: `smtp://127.0.0.1:${port}`, arrivals, close: () => new Promise((resolve) => server.close(resolve)) };
}

async function metric(port, name) {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) if (line.startsWith(name)) sum += Number(line.split(' ').pop());
  return sum;
}

/** Publishes `count` events of `eventKey` for `email` straight to EVENTS (as the gateway stores them). */
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
      await js.publish(`events.${accountId}`, codec.encode({ eventId, accountId, eventKey, email, occurredAt: now, receivedAt: now, triggerAutomations: true, properties: { n: i }, consent: null }), { msgID: eventId });
    }
  };
  await Promise.all(Array.from({ length: 256 }, worker));
  await nc.close();
}

/** A bare nats.js pull consumer on EVENTS that only acks `total` messages: messages/s. */
async function rawConsume(natsUrl, total) {
  const nc = await connect({ servers: natsUrl, ...operatorAuth });
  const jsm = await nc.jetstreamManager();
  const durable = 'bench-raw-events';
  await jsm.consumers.add('EVENTS', { durable_name: durable, ack_policy: AckPolicy.Explicit, deliver_policy: DeliverPolicy.All, filter_subject: 'events.>' });
  const consumer = await nc.jetstream().consumers.get('EVENTS', durable);
  const started = Date.now();
  let seen = 0;
  while (seen < total) {
    const batch = await consumer.fetch({ max_messages: Math.min(1000, total - seen), expires: 5000 });
    for await (const m of batch) {
      m.ack();
      seen++;
    }
  }
  await nc.flush();
  const seconds = (Date.now() - started) / 1000;
  await jsm.consumers.delete('EVENTS', durable);
  await nc.close();
  return Math.round(total / seconds);
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

    // 1. backlog, before messaging exists: the bare consumer first, then the service from scratch
    await publishEvents(nats.url, account.accountId, 'ann@example.org', 'bench.backlog', backlogSize);
    const raw = await rawConsume(nats.url, backlogSize);
    messaging = await spawnReady('services/messaging/dist/main.js', messagingEnv, 120_000);
    const metricsPort = messaging.ready.metricsPort;
    const cpuBefore = { messaging: cpuSeconds(messaging.pid), subscriber: cpuSeconds(subscriber.pid), nats: cpuSeconds(nats.pid) };
    const started = Date.now();
    for (;;) {
      if ((await metric(metricsPort, 'messaging_custom_events_total')) >= backlogSize) break;
      await sleep(100);
    }
    const consumed = Math.round(backlogSize / ((Date.now() - started) / 1000));
    const perEvent = (name, pid) => Math.round(((cpuSeconds(pid) - cpuBefore[name]) * 1e6) / backlogSize);
    const backlogCpu = { messaging: perEvent('messaging', messaging.pid), subscriber: perEvent('subscriber', subscriber.pid), nats: perEvent('nats', nats.pid) };
    const backlogRss = rssMb(messaging.pid);

    // 2. latency: an automation mailing every event, events posted on a fixed schedule
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

    // 3. many waiting runs: each waits, then tags the subscriber (one cheap gRPC call)
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

    console.log(`\nbench/automations (${os.cpus().length} cores, load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')})`);
    console.table({
      [`backlog of ${backlogSize} events: recorded + matched /s`]: { figure: consumed, baseline: raw, ratio: +(consumed / raw).toFixed(3), target: '>= 3000/s and ratio >= 0.25', verdict: verdict(consumed >= 3000 && consumed / raw >= 0.25) },
    });
    console.log(`  CPU per event (µs): ${JSON.stringify(backlogCpu)}; one idle core would allow ~${Math.round(1e6 / backlogCpu.messaging)}/s in messaging`);
    console.log(`  baseline: a bare nats.js pull consumer acking the same ${backlogSize} events; messaging RSS after the backlog ${backlogRss.rss} MB (peak ${backlogRss.peak} MB)`);
    console.log(`\nPOST /events 202 -> automation mail at the sink, ${latencyTotal} events at ${rate}/s (statuses ${JSON.stringify(statuses)})`);
    console.table({ 'latency (ms)': latency });
    console.log(`  p99 ${latency.p99} ms (target < 2000: ${verdict(latency.p99 < 2000 && latency.arrived === latency.accepted)})`);
    console.log(`\n${waitingRuns} runs started in ${fillSeconds.toFixed(1)} s, ${waitingNow} waiting at once: messaging RSS ${waitingRss.rss} MB (peak ${waitingRss.peak} MB)`);
    console.log(`  restart on the same data: ready in ${readySeconds.toFixed(1)} s, every due run resumed and completed ${resumedSeconds.toFixed(1)} s after the start`);
    fs.rmSync(dataDir, { recursive: true, force: true });
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
