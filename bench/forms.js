#!/usr/bin/env node
// bench/forms (issue 12): public form submissions (POST /public/forms/{formId}/submissions, JSON, a
// new address each time, double opt-in on) per second through the gateway's proxy, beside the same
// submissions sent straight to the form service's HTTP listener in the same run (the proxy's cost).
// Then end to end: every accepted submission decided (QUEUED) and its confirmation mail captured at a
// local SMTP sink; the rate is a round's submissions over the time from its start to its last mail.
// Real processes: NATS, subscriber, messaging (delivery worker on), form, gateway. The per-address and
// per-account limits are raised; the load tool stands for 1,000 reader addresses (X-Forwarded-For).
// Targets: proxy >= 0.7 of direct; >= 500 submissions/s end to end.
// Usage: npm run bench:forms [-- --duration 10 --connections 32]
'use strict';
const { parseArgs } = require('node:util');
const autocannon = require('autocannon');
const { SMTPServer } = require('smtp-server');
const { freePort, startNatsServer, startService, startGateway } = require('@mailer/testing');
const { verdict, benchAccount, rssMb, cpuSeconds } = require('./lib');

const { values: args } = parseArgs({ options: { duration: { type: 'string', default: '10' }, connections: { type: 'string', default: '32' } } });
const duration = Number(args.duration);
const connections = Number(args.connections);

/** An SMTP sink counting mails and remembering when the last one arrived. */
async function startSink() {
  const port = await freePort();
  const sink = { url: `smtp://127.0.0.1:${port}`, count: 0, lastAt: 0 };
  const server = new SMTPServer({
    logger: false, authOptional: true, disabledCommands: ['AUTH', 'STARTTLS'], maxClients: 1000,
    onData(stream, _session, callback) {
      stream.on('data', () => undefined);
      stream.on('end', () => {
        sink.count++;
        sink.lastAt = Date.now();
        callback(null, 'Ok');
      });
    },
  });
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  sink.close = () => new Promise((resolve) => server.close(resolve));
  return sink;
}

let sequence = 0;
/** autocannon against one submissions URL, every request a new address; CPU µs per 202 of each process. */
async function submit(url, pids, seconds) {
  const before = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, cpuSeconds(pid)]));
  const result = await autocannon({
    url, method: 'POST', connections, duration: seconds,
    headers: { 'content-type': 'application/json' },
    requests: [{
      setupRequest: (req) => {
        const n = ++sequence;
        // Readers come from many addresses: 1,000 of them, as a proxy in front of the gateway would
        // forward them (GATEWAY_TRUST_PROXY=1). One address would make every request contend for one
        // rate-limit key, which no real audience does.
        const headers = { ...req.headers, 'x-forwarded-for': `10.0.${(n % 1000) >> 8}.${n % 256}` };
        return { ...req, headers, body: JSON.stringify({ values: { email: `reader${n}@example.org` } }) };
      },
    }],
  });
  const ok = result['2xx'];
  const cpuUs = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, Math.round(((cpuSeconds(pid) - before[name]) * 1e6) / Math.max(ok, 1))]));
  return { 'submissions/s': Math.round(ok / seconds), p50: result.latency.p50, p99: result.latency.p99, non2xx: result.non2xx, errors: result.errors + result.timeouts, cpuUs };
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
    const formHttpAddr = `127.0.0.1:${await freePort()}`;
    const form = await startService('form', {
      NATS_URL: nats.url, SUBSCRIBER_GRPC_ADDR: subscriber.address, MESSAGING_GRPC_ADDR: messaging.address,
      FORM_HTTP_ADDR: formHttpAddr, PUBLIC_BASE_URL: 'https://forms.bench.test',
      FORM_SUBMISSIONS_PER_MINUTE: '100000000', FORM_ACCOUNT_DAILY_CONFIRMATIONS: '0',
    });
    stops.push(() => form.stop());
    const gw = await startGateway({
      NATS_URL: nats.url, SUBSCRIBER_GRPC_ADDR: subscriber.address, MESSAGING_GRPC_ADDR: messaging.address, FORM_GRPC_ADDR: form.address,
      FORM_HTTP_ADDR: formHttpAddr, GATEWAY_PUBLIC_PER_MINUTE: '100000000', GATEWAY_TRUST_PROXY: '1',
    });
    stops.push(() => gw.stop());

    const account = await benchAccount(gw, 'bench-forms');
    await account.call('POST', '/sender-profiles', { name: 'News', fromEmail: 'news@example.com', fromName: 'News' });
    const created = await account.call('POST', '/forms', {
      name: 'Newsletter', type: 'DEFAULT', doubleOptIn: true,
      inputFields: [{ fieldRef: { type: 'BUILT_IN', builtInField: 'EMAIL' }, isRequired: true }],
    });
    const path = `/public/forms/${created.id}/submissions`;
    const pids = { gateway: gw.pid, 'form service': form.pid, 'load tool': process.pid };

    // Submissions so far (every one stored with its job) and mails captured so far.
    const submissions = async (decision) => (await account.call('GET', `/forms/${created.id}/submissions?pageSize=1${decision ? `&decision=${decision}` : ''}`)).totalItems;
    /** Waits until every accepted submission is mailed (or nothing moved for 20 s): the time of the last mail. */
    async function drained() {
      const accepted = await submissions();
      let last = -1;
      let quietSince = Date.now();
      while (sink.count < accepted) {
        if (sink.count !== last) (last = sink.count), (quietSince = Date.now());
        else if (Date.now() - quietSince > 20_000) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      return sink.lastAt;
    }

    await submit(`http://${formHttpAddr}${path}`, pids, 3); // warm-up: JIT, connections, store
    await drained();
    // Interleaved rounds (direct, proxy, direct, proxy), each starting on an idle system: the mails of a
    // round's submissions are all out before the next round starts (deciding and mailing cost more than
    // accepting, and a backlog would slow whichever path runs next). End to end per round: its
    // submissions over the time from its start to its last mail.
    const rounds = [];
    for (let r = 0; r < 2; r++) {
      for (const [kind, url] of [['direct', `http://${formHttpAddr}${path}`], ['proxy', `${gw.url}${path}`]]) {
        const mailedBefore = sink.count;
        const roundStart = Date.now();
        const result = await submit(url, pids, duration / 2);
        const lastMail = await drained();
        result.endToEnd = Math.round((sink.count - mailedBefore) / ((lastMail - roundStart) / 1000));
        rounds.push([kind, result]);
      }
    }
    const mean = (kind, key) => Math.round(rounds.filter(([k]) => k === kind).reduce((sum, [, r]) => sum + r[key], 0) / 2);
    const row = (kind) => {
      const of = rounds.filter(([k]) => k === kind).map(([, r]) => r);
      return {
        'accepted/s': mean(kind, 'submissions/s'), 'p50 ms': mean(kind, 'p50'), 'p99 ms': mean(kind, 'p99'),
        non2xx: of.reduce((s, r) => s + r.non2xx, 0), errors: of.reduce((s, r) => s + r.errors, 0),
        'gateway CPU µs': Math.round((of[0].cpuUs.gateway + of[1].cpuUs.gateway) / 2),
        'form CPU µs': Math.round((of[0].cpuUs['form service'] + of[1].cpuUs['form service']) / 2),
        'end to end /s': mean(kind, 'endToEnd'),
      };
    };
    const accepted = await submissions();
    const queued = await submissions('QUEUED');

    const direct = row('direct');
    const proxy = row('proxy');
    console.log(`\nbench/forms: public submissions, new address each, double opt-in, ${connections} connections, 2 x ${duration / 2} s per path (interleaved)`);
    console.table({ 'straight to the form service': direct, 'through the gateway proxy': proxy });
    const ratio = proxy['accepted/s'] / direct['accepted/s'];
    console.log(`ratio proxy / direct (accepted/s): ${ratio.toFixed(2)} (target >= 0.7: ${verdict(ratio >= 0.7)})`);
    console.log(`end to end through the proxy: ${proxy['end to end /s']} submissions/s decided and mailed (target >= 500: ${verdict(proxy['end to end /s'] >= 500 && sink.count >= accepted)}); ` +
      `in all ${accepted} accepted, ${queued} decided QUEUED, ${sink.count} confirmation mails captured`);
    console.log(`RSS MB: gateway ${rssMb(gw.pid).rss}, form ${rssMb(form.pid).rss}, messaging ${rssMb(messaging.pid).rss}, subscriber ${rssMb(subscriber.pid).rss}`);
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
