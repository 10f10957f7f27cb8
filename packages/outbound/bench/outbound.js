// The guard's own cost: the same Standard-Webhooks-signed POSTs to 10 local receivers (a process of
// their own, ./receivers.js), plain undici vs @mailer/outbound (lookup hook, address checks, whole-call
// timer, capped body read), alternating rounds in this one process. CPU per request is the stable
// figure on a shared machine; rates swing with other load.
// Usage: npx tsc -b packages/outbound && node packages/outbound/bench/outbound.js [requests=20000] [inFlightPerReceiver=8]
'use strict';
const crypto = require('node:crypto');
const path = require('node:path');
const { fork } = require('node:child_process');
const { Agent, request } = require('undici');
const { createOutbound } = require('..');

const N = Number(process.argv[2] ?? 20_000);
const IN_FLIGHT = Number(process.argv[3] ?? 8);
const RECEIVERS = 10;
const ROUNDS = 3;

const secret = `whsec_${crypto.randomBytes(32).toString('base64')}`;
const key = Buffer.from(secret.slice(6), 'base64');

/** A body like a webhook delivery's: {id, type, createdAt, data} with a subscriber record (~0.6 KB). */
const body = (i) =>
  JSON.stringify({
    id: `evt_${crypto.randomUUID()}`,
    type: 'subscriber.created',
    createdAt: new Date().toISOString(),
    data: { id: crypto.randomUUID(), email: `reader${i}@example.org`, status: 'ACTIVE', firstName: 'Reader', lastName: `No ${i}`, fields: { company: 'Example Ltd', plan: 'pro' }, tagIds: [crypto.randomUUID()], createdAt: new Date().toISOString() },
  });
const headers = (b) => {
  const id = `msg_${crypto.randomUUID()}`;
  const ts = Math.floor(Date.now() / 1000);
  const sig = crypto.createHmac('sha256', key).update(`${id}.${ts}.${b}`).digest('base64');
  return { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': String(ts), 'webhook-signature': `v1,${sig}` };
};

async function round(urls, post) {
  const queues = urls.map(() => []);
  for (let i = 0; i < N; i++) queues[i % urls.length].push(body(i));
  let ok = 0;
  const cpu = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const worker = async (t) => {
    for (let b = queues[t].shift(); b !== undefined; b = queues[t].shift()) if ((await post(urls[t], headers(b), b)) === 204) ok++;
  };
  await Promise.all(urls.flatMap((_u, t) => Array.from({ length: IN_FLIGHT }, () => worker(t))));
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const used = process.cpuUsage(cpu);
  return { ok, rate: Math.round(ok / seconds), cpuUs: Math.round((used.user + used.system) / ok) };
}

(async () => {
  const rx = fork(path.join(__dirname, 'receivers.js'), [JSON.stringify({ count: RECEIVERS, secret })], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const { ports } = await new Promise((resolve) => rx.once('message', resolve));
  const urls = ports.map((p) => `http://127.0.0.1:${p}/hooks`);
  const agent = new Agent({ connections: IN_FLIGHT });
  const plain = async (url, h, b) => {
    const res = await request(url, { dispatcher: agent, method: 'POST', headers: h, body: b, signal: AbortSignal.timeout(15_000) });
    await res.body.dump();
    return res.statusCode;
  };
  const outbound = createOutbound({ allowHttp: true, allowedCidrs: ['127.0.0.0/8'] }, { connectionsPerOrigin: IN_FLIGHT });
  const guarded = async (url, h, b) => (await outbound.request(url, { method: 'POST', headers: h, body: b, timeoutMs: 15_000, maxResponseBytes: 2048 })).status;
  try {
    await round(urls, plain); // warm-up of both paths and the receivers
    await round(urls, guarded);
    const results = { undici: [], outbound: [] };
    for (let r = 0; r < ROUNDS; r++) {
      results.undici.push(await round(urls, plain));
      results.outbound.push(await round(urls, guarded));
    }
    const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const stats = await new Promise((resolve) => (rx.once('message', (m) => resolve(m.stats)), rx.send({ cmd: 'stats' })));
    for (const [name, rs] of Object.entries(results)) {
      console.log(`${name.padEnd(8)}: ${median(rs.map((x) => x.rate))} req/s, ${median(rs.map((x) => x.cpuUs))} µs CPU per request (median of ${ROUNDS} rounds of ${N}; ${rs.reduce((a, x) => a + x.ok, 0)} answered 204)`);
    }
    const overhead = median(results.outbound.map((x) => x.cpuUs)) - median(results.undici.map((x) => x.cpuUs));
    console.log(`guard overhead: ${overhead} µs CPU per request; signatures sampled at the receivers: ${stats.reduce((a, s) => a + s.verified, 0)} ok, ${stats.reduce((a, s) => a + s.badSignatures, 0)} bad`);
  } finally {
    await agent.close();
    await outbound.close();
    rx.disconnect();
  }
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
