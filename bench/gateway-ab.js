// bench/gateway-ab: two gateway builds against the same NATS (and subscriber service), measured in
// INTERLEAVED rounds (A, B, A, B, ...) on the same load, medians reported: the way to tell a change
// from the noise of a shared 2-core machine (~10% run to run). CPU per request comes from /proc.
// Builds are directories holding a built gateway: copies of gateway/dist inside the repository (it
// finds node_modules through it), e.g. `cp -r gateway/dist .ab/before`, change, `npx tsc -b`,
// `cp -r gateway/dist .ab/after`. NODE_EXEC_ARGS=--trace-gc adds scavenges per 1,000 requests
// (approximate: counted over warm-up and run, scaled to the run's requests; compare A with B only).
// --mode forms: public form submissions (a new address each, 1,000 reader addresses) forwarded by both
// gateways to one form service (with subscriber and messaging deciding and mailing them into a counting
// sink); each round starts once the previous rounds' confirmation mails are out.
// --mode pages: the same submissions forwarded to a bare node:http owner answering at once (no form
// service): the gateway's own cost per forwarded request, without a slow owner setting the pace.
// --node-options-a / --node-options-b: NODE_OPTIONS of each (default the chart's heap caps), to compare
// runtime settings of one build (pass the same dir twice).
// Usage: node bench/gateway-ab.js <dirA> <dirB> [--mode get|events|forms|pages] [--rounds 3] [--duration 8]   (dirs relative to the repo root)
'use strict';
const { parseArgs } = require('node:util');
const { freePort, startNatsServer, startService, spawnReady, gatewaySecrets, createAccount, adminRequest, serviceAddresses, processCredentials } = require('@mailer/testing');
const { GATEWAY_NODE_OPTIONS, measure, median, rssMb, startSmtpSink, benchAccount, submissionRequests, drained, startBaseline } = require('./lib');
const { values: a, positionals } = parseArgs({ allowPositionals: true, options: { mode: { type: 'string', default: 'get' }, rounds: { type: 'string', default: '3' }, duration: { type: 'string', default: '8' }, accounts: { type: 'string', default: '100' }, 'node-options-a': { type: 'string', default: GATEWAY_NODE_OPTIONS }, 'node-options-b': { type: 'string', default: GATEWAY_NODE_OPTIONS } } });
const [A, B] = positionals;
const duration = Number(a.duration);
async function gateway(dir, env, secrets, nodeOptions) {
  const p = await spawnReady(`${dir}/main.js`, { LOG_LEVEL: 'info', GATEWAY_PORT: '0', ADMIN_PORT: '0', METRICS_PORT: '0', ADMIN_HOST: '127.0.0.1', MAILER_SERVICE: 'gateway', NODE_OPTIONS: nodeOptions, ...processCredentials('gateway'), ...env, ...secrets });
  const { port, adminPort } = p.ready;
  return { output: p.output, url: `http://127.0.0.1:${port}`, adminUrl: `http://127.0.0.1:${adminPort}`, adminToken: secrets.ADMIN_TOKEN, pid: p.pid, stop: () => p.stop('SIGTERM') };
}
async function main() {
  const stops = [];
  try {
    const nats = await startNatsServer(); stops.push(() => nats.stop());
    const env = { NATS_URL: nats.url };
    if (a.mode === 'pages') {
      const owner = await startBaseline('node', '{"status":"accepted"}'); stops.push(() => owner.stop());
      Object.assign(env, { FORM_HTTP_ADDR: new URL(owner.url).host, GATEWAY_PUBLIC_PER_MINUTE: '100000000', GATEWAY_TRUST_PROXY: '1' });
    }
    if (a.mode !== 'events' && a.mode !== 'pages') { const sub = await startService('subscriber', { NATS_URL: nats.url }); stops.push(() => sub.stop()); Object.assign(env, serviceAddresses([sub])); }
    let sink, form;
    if (a.mode === 'forms') {
      sink = await startSmtpSink(); stops.push(() => sink.close());
      const messaging = await startService('messaging', { NATS_URL: nats.url, SUBSCRIBER_GRPC_ADDR: env.SUBSCRIBER_GRPC_ADDR, SMTP_URL: sink.url, MAIL_ACCOUNT_RATE_PER_SECOND: '100000' }); stops.push(() => messaging.stop());
      const formHttpAddr = `127.0.0.1:${await freePort()}`;
      form = await startService('form', { NATS_URL: nats.url, FORM_HTTP_ADDR: formHttpAddr, SUBSCRIBER_GRPC_ADDR: env.SUBSCRIBER_GRPC_ADDR, MESSAGING_GRPC_ADDR: messaging.address, PUBLIC_BASE_URL: 'https://forms.bench.test', FORM_SUBMISSIONS_PER_MINUTE: '100000000', FORM_ACCOUNT_DAILY_CONFIRMATIONS: '0' }); stops.push(() => form.stop());
      Object.assign(env, serviceAddresses([messaging, form]), { FORM_HTTP_ADDR: formHttpAddr, GATEWAY_PUBLIC_PER_MINUTE: '100000000', GATEWAY_TRUST_PROXY: '1' });
    }
    const secrets = gatewaySecrets();
    const gA = await gateway(A, env, secrets, a['node-options-a']); stops.push(() => gA.stop());
    const gB = await gateway(B, env, secrets, a['node-options-b']); stops.push(() => gB.stop());
    let opts;
    if (a.mode === 'get') {
      const { accountId, apiKey } = await createAccount(gA, 'bench');
      await adminRequest(gA, 'PATCH', `/admin/accounts/${accountId}/rate-limits`, { perMinute: 1_000_000, perHour: 1_000_000 });
      const r = await fetch(`${gA.url}/subscribers`, { method: 'POST', headers: { 'x-api-key': apiKey, 'content-type': 'application/json' }, body: JSON.stringify({ email: 'bench@example.org', firstName: 'Bench' }) });
      const s = await r.json(); if (r.status !== 201) throw new Error(JSON.stringify(s));
      opts = (gw) => ({ url: `${gw.url}/subscribers/${s.id}`, headers: { 'x-api-key': apiKey }, duration, connections: 64 });
    } else if (a.mode === 'pages') {
      opts = (gw) => ({ url: `${gw.url}/public/forms/f-1/submissions`, method: 'POST', requests: submissionRequests(), duration, connections: 32 });
    } else if (a.mode === 'forms') {
      const account = await benchAccount(gA, 'bench-forms');
      await account.call('POST', '/sender-profiles', { name: 'News', fromEmail: 'news@example.com', fromName: 'News' });
      const created = await account.call('POST', '/forms', { name: 'Newsletter', type: 'DEFAULT', doubleOptIn: true, inputFields: [{ fieldRef: { type: 'BUILT_IN', builtInField: 'EMAIL' }, isRequired: true }] });
      const accepted = async () => (await account.call('GET', `/forms/${created.id}/submissions?pageSize=1`)).totalItems;
      opts = (gw) => ({ url: `${gw.url}/public/forms/${created.id}/submissions`, method: 'POST', headers: { 'content-type': 'application/json' }, requests: submissionRequests(), duration, connections: 32, before: () => drained(sink, accepted) });
    } else {
      const keys = []; for (let i = 0; i < Number(a.accounts); i++) keys.push((await createAccount(gA, `bench-${i}`)).apiKey);
      const body = JSON.stringify({ eventKey: 'order.paid', email: 'ann@example.org', properties: { orderId: 'o-1', amount: 42.5 } });
      const requests = keys.map((key) => ({ method: 'POST', path: '/events', headers: { 'content-type': 'application/json', 'x-api-key': key }, body }));
      opts = (gw) => ({ url: gw.url, requests, duration, connections: 64 });
    }
    const nameA = A === B ? `${A} [${a['node-options-a']}]` : A;
    const nameB = A === B ? `${B} [${a['node-options-b']}]` : B;
    const res = { [nameA]: [], [nameB]: [] };
    for (let i = 0; i < Number(a.rounds); i++) {
      for (const [name, gw] of [[nameA, gA], [nameB, gB]]) {
        const gcs = () => (gw.output().match(/Scavenge/g) || []).length;
        const g0 = gcs();
        const o = opts(gw);
        if (o.before) await o.before();
        delete o.before;
        const m = await measure(o, { gateway: gw.pid });
        m.scav = Math.round(((gcs() - g0) * 1e5) / (m.requests * 1.27)) / 100; // per 1k requests (the warm-up is ~27% extra at 8 s)
        res[name].push(m);
        console.log(`${name}: ${m.reqPerSec} req/s, ${m.cpuUs.gateway} µs/req, p99 ${m.p99} ms, non2xx ${m.non2xx}, errors ${m.errors}, scavenges/1k ${m.scav}`);
      }
    }
    for (const [name, gw] of [[nameA, gA], [nameB, gB]]) {
      const r = res[name];
      console.log(`MEDIAN ${name}: ${median(r.map((m) => m.reqPerSec))} req/s, ${median(r.map((m) => m.cpuUs.gateway))} µs/req, p99 ${median(r.map((m) => m.p99))} ms, scavenges/1k ${median(r.map((m) => m.scav))}, RSS peak ${rssMb(gw.pid).peak} MB`);
    }
  } finally { for (const s of stops.reverse()) await s().catch(() => {}); }
}
main().catch((e) => { console.error(e); process.exit(1); });
