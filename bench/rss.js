#!/usr/bin/env node
// bench/rss (issues 15, 26): RSS issues to `--recipients` subscribers (default 20,000: a segment of that
// many ACTIVE subscribers in a topic), real processes (NATS, subscriber, segment, messaging with its
// delivery worker, rss, gateway, a local feed and a local SMTP sink). The figure: mails per second from
// the release of an issue to its last mail at the sink, beside one pooled nodemailer transport sending
// as many pre-rendered mails to the same sink. Like with like: the sink and the baseline sender are
// processes of their own; after a warm-up of both (an issue to a small audience), rounds alternate
// (baseline, issue, baseline, issue, ...), each issue a new one of the same newsletter to the whole
// audience. Printed per round: rates, CPU per mail of every process, and the messaging service's store
// commits and document writes per mail (accept to DELIVERED). Target (issue 26): >= 0.4 of the
// baseline; messaging CPU <= 600 µs per mail.
// The account's send rate (MAIL_ACCOUNT_RATE_PER_SECOND, default 100/s) is raised: the pipeline is
// measured, not the operator's budget.
// Usage: npm run bench:rss [-- --recipients 20000 --rounds 2 --page 500]   (BENCH_PROFILE=<dir>: CPU profile of messaging)
'use strict';
const { parseArgs } = require('node:util');
const crypto = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { freePort, spawnReady, startNatsServer, startService, startGateway } = require('@mailer/testing');
const { verdict, benchAccount, rssMb, cpuSeconds, startSink, startNodemailerSender, median } = require('./lib');

const { values: args } = parseArgs({
  options: { recipients: { type: 'string', default: '20000' }, rounds: { type: 'string', default: '2' }, warmup: { type: 'string', default: '500' }, page: { type: 'string', default: '500' } },
});
const total = Number(args.recipients);
const rounds = Number(args.rounds);
const warmup = Number(args.warmup);
const POOL = 5; // the messaging service's SMTP_POOL_SIZE default
const CONCURRENCY = 20; // its MAIL_SEND_CONCURRENCY default
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The sum of a metric's samples on a service's /metrics. */
async function metric(port, name) {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) if (line.startsWith(`${name} `) || line.startsWith(`${name}{`)) sum += Number(line.split(' ').pop());
  return sum;
}

function startFeed() {
  let body = '';
  const server = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/rss+xml' }).end(body));
  const items = (guids) => guids.map((g) => `<item><guid>${g}</guid><title>Post ${g}</title><link>https://blog.example/${g}</link><description>About ${g}</description></item>`).join('');
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({
    url: `http://127.0.0.1:${server.address().port}/feed.xml`,
    set: (guids) => (body = `<?xml version="1.0"?><rss version="2.0"><channel><title>Bench blog</title><link>https://blog.example/</link>${items(guids)}</channel></rss>`),
    close: () => new Promise((r) => server.close(r)),
  })));
}

async function main() {
  const stops = [];
  const dirs = [];
  try {
    const nats = await startNatsServer();
    stops.push(() => nats.stop());
    const sink = await startSink();
    stops.unshift(() => sink.close());
    const sender = await startNodemailerSender();
    stops.unshift(() => sender.close());

    const addr = async () => `127.0.0.1:${await freePort()}`;
    const [subscriberAddr, messagingAddr, rssAddr] = [await addr(), await addr(), await addr()];
    const segment = await startService('segment', { NATS_URL: nats.url, SUBSCRIBER_GRPC_ADDR: subscriberAddr });
    stops.unshift(() => segment.stop());
    const common = { LOG_LEVEL: 'info', METRICS_PORT: '0', NATS_URL: nats.url, SUBSCRIBER_GRPC_ADDR: subscriberAddr, SEGMENT_GRPC_ADDR: segment.address, MESSAGING_GRPC_ADDR: messagingAddr, RSS_GRPC_ADDR: rssAddr };
    const dir = (name) => {
      const d = fs.mkdtempSync(path.join(os.tmpdir(), `mailer-bench-rss-${name}-`));
      dirs.push(d);
      return d;
    };
    const subscriber = await spawnReady('services/subscriber/dist/main.js', { ...common, DATA_DIR: dir('subscriber') });
    stops.unshift(() => subscriber.stop());
    const messaging = await spawnReady('services/messaging/dist/main.js', {
      ...common, DATA_DIR: dir('messaging'), MESSAGING_HTTP_ADDR: await addr(), BOUNCE_SMTP_PORT: String(await freePort()),
      TRACKING_SECRET: crypto.randomBytes(32).toString('base64url'), SMTP_URL: sink.url, MAIL_ACCOUNT_RATE_PER_SECOND: '100000',
      // profile the messaging service: BENCH_PROFILE=/tmp/prof npm run bench:rss
      ...(process.env.BENCH_PROFILE ? { NODE_EXEC_ARGS: `--cpu-prof --cpu-prof-dir=${process.env.BENCH_PROFILE}` } : {}),
      // the heap flags the messaging service runs with (e.g. BENCH_MESSAGING_NODE_OPTIONS=--max-old-space-size=256)
      ...(process.env.BENCH_MESSAGING_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_MESSAGING_NODE_OPTIONS } : {}),
    });
    // with BENCH_PROFILE, the rounds' wall-clock windows and the stop, to cut the profile to the rounds
    const profiled = (...words) => process.env.BENCH_PROFILE && console.log(`profile: ${words.join(' ')}`);
    stops.unshift(() => (profiled('stop', Date.now()), messaging.stop()));
    const rss = await spawnReady('services/rss/dist/main.js', {
      ...common, DATA_DIR: dir('rss'), OUTBOUND_ALLOW_HTTP: 'true', OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8', RSS_SEND_PAGE_SIZE: args.page,
    });
    stops.unshift(() => rss.stop());
    const gw = await startGateway({ NATS_URL: nats.url, SUBSCRIBER_GRPC_ADDR: subscriberAddr, SEGMENT_GRPC_ADDR: segment.address, MESSAGING_GRPC_ADDR: messagingAddr, RSS_GRPC_ADDR: rssAddr });
    stops.unshift(() => gw.stop());
    const metricsPort = messaging.ready.metricsPort;

    const a = await benchAccount(gw, 'bench-rss');
    const profile = await a.call('POST', '/sender-profiles', { name: 'Blog', fromEmail: 'blog@example.com', fromName: 'The Blog' });
    /** `count` ACTIVE subscribers in a topic of their own, and a segment holding exactly them. */
    async function audience(domain, count) {
      const topic = await a.call('POST', '/topics', { label: `Readers at ${domain}` });
      const seg = await a.call('POST', '/segments', {
        name: `Readers at ${domain}`,
        expression: { conditionGroups: [{ conditions: [{ subjectType: 'FIELD', fieldRef: { type: 'BUILT_IN', builtInField: 'EMAIL' }, operator: 'TEXT_ENDS_WITH', operand: { kind: 'TEXT', text: `@${domain}` } }] }] },
      });
      for (let i = 0; i < count; i += 1000) {
        const batch = Array.from({ length: Math.min(1000, count - i) }, (_, j) => ({ email: `reader${i + j}@${domain}`, firstName: `Reader ${i + j}`, topicIds: [topic.id] }));
        await a.call('POST', '/subscribers/sync', { mode: 'CREATE_ONLY', subscribers: batch });
      }
      // The segment service projects subscribers from DOMAIN facts: wait until it has them all.
      for (;;) {
        // (503 segment_projection_lagging while it catches up: asked again)
        const page = await a.call('GET', `/subscribers?segmentId=${seg.id}&topicId=${topic.id}&status=ACTIVE&pageSize=1`).catch(() => null);
        if (page && Number(page.totalItems) >= count) break;
        await sleep(1000);
      }
      return { topic, seg };
    }
    let loaded = Date.now();
    const readers = await audience('readers.test', total);
    const warm = await audience('warm.test', warmup);
    console.log(`loaded ${total} + ${warmup} ACTIVE subscribers in their topics and segments in ${Math.round((Date.now() - loaded) / 1000)} s`);

    let posts = 0;
    /** A newsletter of the audience on a feed of its own (its first check only records the feed's current items). */
    async function newsletter({ topic, seg }) {
      const feed = await startFeed();
      stops.unshift(() => feed.close());
      feed.set(['old']);
      const created = await a.call('POST', '/rss-newsletters', {
        name: `Digest for ${seg.name}`, sourceUrl: feed.url, triggerMode: 'INSTANT', releasePolicy: 'REVIEW', senderProfileId: profile.id, segmentId: seg.id, topicId: topic.id,
        subjectPattern: '{{ items[0].title }} and more for {{ subscriber.firstName }}',
        htmlContent: '<p class="hi">Hi {{ subscriber.firstName }}</p>{% for item in items %}<p><a href="{{ item.link }}">{{ item.title }}</a> {{ item.summary }}</p>{% endfor %}<a href="{{ links.unsubscribe }}">Unsubscribe</a>',
        cssContent: '.hi { font-weight: bold; }',
      });
      await a.call('POST', `/rss-newsletters/${created.id}/check`);
      return { ...created, feed };
    }
    const digest = await newsletter(readers);
    const warmDigest = await newsletter(warm);

    /** Five new posts, an issue of the newsletter, released: {rate, CPU µs per mail by process, store work per mail}. */
    async function issueRound(n, count) {
      const guids = Array.from({ length: 5 }, () => `p${++posts}`);
      n.feed.set([...guids.reverse(), 'old']);
      const { issueId } = await a.call('POST', `/rss-newsletters/${n.id}/check`);
      await sink.reset();
      const store0 = { commits: await metric(metricsPort, 'store_commits_total'), writes: await metric(metricsPort, 'store_document_writes_total') };
      const cpu0 = { messaging: cpuSeconds(messaging.pid), rss: cpuSeconds(rss.pid), subscriber: cpuSeconds(subscriber.pid), nats: cpuSeconds(nats.pid) };
      let peak = 0;
      const released = Date.now();
      await a.call('POST', `/rss-newsletters/${n.id}/issues/${issueId}/release`);
      const arrived = sink.until(count);
      let done = false;
      arrived.then(() => (done = true));
      while (!done) {
        peak = Math.max(peak, rssMb(messaging.pid).rss);
        await sleep(500);
      }
      const at = await arrived;
      profiled('round', released, at.last);
      // the round is over once the messaging service published every fact it recorded
      while ((await metric(metricsPort, 'outbox_pending_events')) > 0) await sleep(50);
      const perMail = (name, pid) => ((cpuSeconds(pid) - cpu0[name]) * 1e6) / count;
      const store = { commits: (await metric(metricsPort, 'store_commits_total')) - store0.commits, writes: (await metric(metricsPort, 'store_document_writes_total')) - store0.writes };
      return {
        rate: (count * 1000) / (at.last - released),
        cpuUs: { messaging: perMail('messaging', messaging.pid), rss: perMail('rss', rss.pid), subscriber: perMail('subscriber', subscriber.pid), nats: perMail('nats', nats.pid) },
        store: { commits: store.commits / count, writes: store.writes / count },
        peak,
      };
    }

    async function baselineRound(count) {
      await sink.reset();
      const cpu0 = cpuSeconds(sender.pid);
      const started = Date.now();
      await sender.send({ url: sink.url, n: count, pool: POOL, concurrency: CONCURRENCY, mail: 'newsletter', prefix: `raw${started}-` });
      const at = await sink.stats();
      return { rate: (count * 1000) / (at.last - started), cpuUs: ((cpuSeconds(sender.pid) - cpu0) * 1e6) / count };
    }

    await baselineRound(warmup);
    await issueRound(warmDigest, warmup);
    const results = [];
    for (let r = 1; r <= rounds; r++) {
      const baseline = await baselineRound(total);
      const system = await issueRound(digest, total);
      results.push({ baseline, system });
      console.log(
        `round ${r}: nodemailer ${Math.round(baseline.rate)} mails/s (${Math.round(baseline.cpuUs)} µs/mail) | issue ${Math.round(system.rate)} mails/s, CPU µs/mail ${JSON.stringify(Object.fromEntries(Object.entries(system.cpuUs).map(([k, v]) => [k, Math.round(v)])))}` +
          `, per mail ${system.store.commits.toFixed(2)} store commits and ${system.store.writes.toFixed(2)} document writes in messaging, its peak RSS ${system.peak} MB | ratio ${(system.rate / baseline.rate).toFixed(2)}`,
      );
    }
    const ratios = results.map((x) => x.system.rate / x.baseline.rate);
    const ratio = median(ratios);
    const messagingUs = median(results.map((x) => x.system.cpuUs.messaging));
    console.log(`\nbench/rss: ${rounds} rounds of ${total} mails each way (after ${warmup} of each); load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}`);
    console.log(`issue: ${Math.round(median(results.map((x) => x.system.rate)))} mails/s; pooled nodemailer: ${Math.round(median(results.map((x) => x.baseline.rate)))} mails/s (${Math.round(median(results.map((x) => x.baseline.cpuUs)))} µs/mail)`);
    console.log(`ratio (median of rounds ${ratios.map((x) => x.toFixed(2)).join(', ')}): ${ratio.toFixed(2)} (target >= 0.4) ${verdict(ratio >= 0.4)}`);
    console.log(`messaging CPU per mail: ${Math.round(messagingUs)} µs (target <= 600) ${verdict(messagingUs <= 600)}`);
  } finally {
    for (const stop of stops) await stop().catch(() => undefined);
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
