#!/usr/bin/env node
// bench/rss (issue 15): one RSS issue to `--recipients` subscribers (default 100,000: a segment of that
// many ACTIVE subscribers in a topic), real processes (NATS, subscriber, segment, messaging with its
// delivery worker, rss, gateway, a local feed and a local SMTP sink). The figure: time from the
// release of the issue to the last mail at the sink, beside one pooled nodemailer transport sending
// the same number of pre-rendered mails to the same sink in the same run. Target: >= 0.5 of that
// rate. Also the resident memory (peak) of the messaging and rss services during the send.
// The account's send rate (MAIL_ACCOUNT_RATE_PER_SECOND, default 100/s) is raised: the pipeline is
// measured, not the operator's budget.
// Usage: npm run bench:rss [-- --recipients 100000 --page 500]   (BENCH_PROFILE=<dir>: CPU profile of messaging)
'use strict';
const { parseArgs } = require('node:util');
const crypto = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { freePort, spawnReady, startNatsServer, startService, startGateway } = require('@mailer/testing');
const { verdict, benchAccount, rssMb, cpuSeconds, startSmtpSink, rawNodemailer, rawNodemailerLabel } = require('./lib');

const { values: args } = parseArgs({ options: { recipients: { type: 'string', default: '100000' }, page: { type: 'string', default: '500' } } });
const total = Number(args.recipients);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
/** An issue as the raw floor sends it, pre-rendered. */
const RAW_HTML = `<p>Hi reader</p>${'<p><a href="https://blog.example/post">A post of the feed</a> with its summary text.</p>'.repeat(5)}`;

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
    const sink = await startSmtpSink();
    stops.push(() => sink.close());
    const feed = await startFeed();
    stops.push(() => feed.close());

    // The raw floor first, on a quiet machine (a warm-up of 500, then the measured run).
    const rawMail = { from: { name: 'Blog', address: 'blog@example.com' }, subject: (i) => `New posts ${i}`, html: RAW_HTML };
    await rawNodemailer(sink, 500, rawMail);
    const raw = await rawNodemailer(sink, total, rawMail);
    console.log(`${rawNodemailerLabel}: ${Math.round(raw)} mails/s over ${total}`);

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
    });
    stops.unshift(() => messaging.stop());
    const rss = await spawnReady('services/rss/dist/main.js', {
      ...common, DATA_DIR: dir('rss'), OUTBOUND_ALLOW_HTTP: 'true', OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8', RSS_SEND_PAGE_SIZE: args.page,
    });
    stops.unshift(() => rss.stop());
    const gw = await startGateway({ NATS_URL: nats.url, SUBSCRIBER_GRPC_ADDR: subscriberAddr, SEGMENT_GRPC_ADDR: segment.address, MESSAGING_GRPC_ADDR: messagingAddr, RSS_GRPC_ADDR: rssAddr });
    stops.unshift(() => gw.stop());

    const a = await benchAccount(gw, 'bench-rss');
    const profile = await a.call('POST', '/sender-profiles', { name: 'Blog', fromEmail: 'blog@example.com', fromName: 'The Blog' });
    const topic = await a.call('POST', '/topics', { label: 'Blog readers' });
    const seg = await a.call('POST', '/segments', {
      name: 'Readers',
      expression: { conditionGroups: [{ conditions: [{ subjectType: 'FIELD', fieldRef: { type: 'BUILT_IN', builtInField: 'EMAIL' }, operator: 'TEXT_ENDS_WITH', operand: { kind: 'TEXT', text: '@readers.test' } }] }] },
    });
    let loaded = Date.now();
    for (let i = 0; i < total; i += 1000) {
      const batch = Array.from({ length: Math.min(1000, total - i) }, (_, j) => ({ email: `reader${i + j}@readers.test`, firstName: `Reader ${i + j}`, topicIds: [topic.id] }));
      await a.call('POST', '/subscribers/sync', { mode: 'CREATE_ONLY', subscribers: batch });
    }
    // The segment service projects subscribers from DOMAIN facts: wait until it has them all.
    for (;;) {
      const page = await a.call('GET', `/subscribers?segmentId=${seg.id}&topicId=${topic.id}&status=ACTIVE&pageSize=1`);
      if (Number(page.totalItems) >= total) break;
      await sleep(1000);
    }
    console.log(`loaded ${total} ACTIVE subscribers in the topic and the segment in ${Math.round((Date.now() - loaded) / 1000)} s`);

    feed.set(['old']);
    const newsletter = await a.call('POST', '/rss-newsletters', {
      name: 'Bench digest', sourceUrl: feed.url, triggerMode: 'INSTANT', releasePolicy: 'REVIEW', senderProfileId: profile.id, segmentId: seg.id, topicId: topic.id,
      subjectPattern: '{{ items[0].title }} and more for {{ subscriber.firstName }}',
      htmlContent: '<p class="hi">Hi {{ subscriber.firstName }}</p>{% for item in items %}<p><a href="{{ item.link }}">{{ item.title }}</a> {{ item.summary }}</p>{% endfor %}<a href="{{ links.unsubscribe }}">Unsubscribe</a>',
      cssContent: '.hi { font-weight: bold; }',
    });
    feed.set(['p5', 'p4', 'p3', 'p2', 'p1', 'old']);
    const { issueId } = await a.call('POST', `/rss-newsletters/${newsletter.id}/check`);

    sink.reset();
    const cpu0 = { messaging: cpuSeconds(messaging.pid), rss: cpuSeconds(rss.pid) };
    const peak = { messaging: 0, rss: 0 };
    const released = Date.now();
    await a.call('POST', `/rss-newsletters/${newsletter.id}/issues/${issueId}/release`);
    let queuedAt = null;
    let lastReport = released;
    while (sink.times.length < total) {
      await sleep(500);
      peak.messaging = Math.max(peak.messaging, rssMb(messaging.pid).rss);
      peak.rss = Math.max(peak.rss, rssMb(rss.pid).rss);
      if (!queuedAt) {
        const { items } = await a.call('GET', `/rss-newsletters/${newsletter.id}/issues`);
        if (items[0].status === 'SENT') queuedAt = Date.now();
      }
      if (Date.now() - lastReport > 15_000) {
        lastReport = Date.now();
        console.log(`  ${sink.times.length} mails at the sink after ${Math.round((Date.now() - released) / 1000)} s`);
      }
    }
    const seconds = (sink.times[sink.times.length - 1] - released) / 1000;
    const rate = total / seconds;
    const cpu = { messaging: cpuSeconds(messaging.pid) - cpu0.messaging, rss: cpuSeconds(rss.pid) - cpu0.rss };
    console.log(`issue to ${total} recipients: release -> last mail ${seconds.toFixed(1)} s = ${Math.round(rate)} mails/s; every mail queued (SENT) after ${queuedAt ? ((queuedAt - released) / 1000).toFixed(1) : '?'} s`);
    console.log(`CPU per mail: messaging ${Math.round((cpu.messaging * 1e6) / total)} µs, rss ${Math.round((cpu.rss * 1e6) / total)} µs; peak RSS during the send: messaging ${peak.messaging} MB, rss ${peak.rss} MB`);
    const ratio = rate / raw;
    console.log(`ratio: ${ratio.toFixed(2)} of raw nodemailer (target >= 0.5) ${verdict(ratio >= 0.5)}`);
  } finally {
    for (const stop of stops) await stop().catch(() => undefined);
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
