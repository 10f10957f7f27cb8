// bench/gateway-ab: two gateway builds against the same NATS (and subscriber service), measured in
// INTERLEAVED rounds (A, B, A, B, ...) on the same load, medians reported: the way to tell a change
// from the noise of a shared 2-core machine (~10% run to run). CPU per request comes from /proc.
// Builds are directories holding a built gateway: copies of gateway/dist inside the repository (it
// finds node_modules through it), e.g. `cp -r gateway/dist .ab/before`, change, `npx tsc -b`,
// `cp -r gateway/dist .ab/after`. NODE_EXEC_ARGS=--trace-gc adds scavenges per 1,000 requests
// (approximate: counted over warm-up and run, scaled to the run's requests; compare A with B only).
// Usage: node bench/gateway-ab.js <dirA> <dirB> [--mode get|events] [--rounds 3] [--duration 8]   (dirs relative to the repo root)
'use strict';
const { parseArgs } = require('node:util');
const { startNatsServer, startService, spawnReady, gatewaySecrets, createAccount, adminRequest, serviceAddresses, processCredentials } = require('@mailer/testing');
const { measure, rssMb } = require('./lib');
const { values: a, positionals } = parseArgs({ allowPositionals: true, options: { mode: { type: 'string', default: 'get' }, rounds: { type: 'string', default: '3' }, duration: { type: 'string', default: '8' }, accounts: { type: 'string', default: '100' } } });
const [A, B] = positionals;
const duration = Number(a.duration);
async function gateway(dir, env, secrets) {
  const p = await spawnReady(`${dir}/main.js`, { LOG_LEVEL: 'info', GATEWAY_PORT: '0', ADMIN_PORT: '0', METRICS_PORT: '0', ADMIN_HOST: '127.0.0.1', MAILER_SERVICE: 'gateway', NODE_OPTIONS: '--max-old-space-size=128', ...processCredentials('gateway'), ...env, ...secrets });
  const { port, adminPort } = p.ready;
  return { output: p.output, url: `http://127.0.0.1:${port}`, adminUrl: `http://127.0.0.1:${adminPort}`, adminToken: secrets.ADMIN_TOKEN, pid: p.pid, stop: () => p.stop('SIGTERM') };
}
const median = (xs) => { const s = [...xs].sort((x, y) => x - y); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
async function main() {
  const stops = [];
  try {
    const nats = await startNatsServer(); stops.push(() => nats.stop());
    const env = { NATS_URL: nats.url };
    if (a.mode === 'get') { const sub = await startService('subscriber', { NATS_URL: nats.url }); stops.push(() => sub.stop()); Object.assign(env, serviceAddresses([sub])); }
    const secrets = gatewaySecrets();
    const gA = await gateway(A, env, secrets); stops.push(() => gA.stop());
    const gB = await gateway(B, env, secrets); stops.push(() => gB.stop());
    let opts;
    if (a.mode === 'get') {
      const { accountId, apiKey } = await createAccount(gA, 'bench');
      await adminRequest(gA, 'PATCH', `/admin/accounts/${accountId}/rate-limits`, { perMinute: 1_000_000, perHour: 1_000_000 });
      const r = await fetch(`${gA.url}/subscribers`, { method: 'POST', headers: { 'x-api-key': apiKey, 'content-type': 'application/json' }, body: JSON.stringify({ email: 'bench@example.org', firstName: 'Bench' }) });
      const s = await r.json(); if (r.status !== 201) throw new Error(JSON.stringify(s));
      opts = (gw) => ({ url: `${gw.url}/subscribers/${s.id}`, headers: { 'x-api-key': apiKey }, duration, connections: 64 });
    } else {
      const keys = []; for (let i = 0; i < Number(a.accounts); i++) keys.push((await createAccount(gA, `bench-${i}`)).apiKey);
      const body = JSON.stringify({ eventKey: 'order.paid', email: 'ann@example.org', properties: { orderId: 'o-1', amount: 42.5 } });
      const requests = keys.map((key) => ({ method: 'POST', path: '/events', headers: { 'content-type': 'application/json', 'x-api-key': key }, body }));
      opts = (gw) => ({ url: gw.url, requests, duration, connections: 64 });
    }
    const res = { [A]: [], [B]: [] };
    for (let i = 0; i < Number(a.rounds); i++) {
      for (const [name, gw] of [[A, gA], [B, gB]]) {
        const gcs = () => (gw.output().match(/Scavenge/g) || []).length;
        const g0 = gcs();
        const m = await measure(opts(gw), { gateway: gw.pid });
        m.scav = Math.round(((gcs() - g0) * 1e5) / (m.requests * 1.27)) / 100; // per 1k requests (the warm-up is ~27% extra at 8 s)
        res[name].push(m);
        console.log(`${name}: ${m.reqPerSec} req/s, ${m.cpuUs.gateway} µs/req, p99 ${m.p99} ms, non2xx ${m.non2xx}, errors ${m.errors}, scavenges/1k ${m.scav}`);
      }
    }
    for (const [name, gw] of [[A, gA], [B, gB]]) {
      const r = res[name];
      console.log(`MEDIAN ${name}: ${median(r.map((m) => m.reqPerSec))} req/s, ${median(r.map((m) => m.cpuUs.gateway))} µs/req, p99 ${median(r.map((m) => m.p99))} ms, scavenges/1k ${median(r.map((m) => m.scav))}, RSS peak ${rssMb(gw.pid).peak} MB`);
    }
  } finally { for (const s of stops.reverse()) await s().catch(() => {}); }
}
main().catch((e) => { console.error(e); process.exit(1); });
