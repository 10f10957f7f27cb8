// Shared pieces of the benchmarks: a running system, autocannon with a summary, process RSS.
'use strict';
const fs = require('node:fs');
const autocannon = require('autocannon');

/** Runs autocannon and returns req/s and latency percentiles (ms). */
async function load(opts) {
  const result = await autocannon({ connections: 64, duration: 15, ...opts });
  const ok = result['2xx'];
  return {
    requests: result.requests.total,
    ok,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    reqPerSec: Math.round(ok / (result.duration || opts.duration || 15)),
    p50: result.latency.p50,
    p99: result.latency.p99,
  };
}

/** Resident memory of a process in MB (current and peak), read from /proc. */
function rssMb(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key) => Number((status.match(new RegExp(`${key}:\\s+(\\d+)`)) || [])[1] || 0);
  return { rss: Math.round(kb('VmRSS') / 1024), peak: Math.round(kb('VmHWM') / 1024) };
}

/** The gateway's NODE_OPTIONS as the chart and the local runner set them (heap caps, values.yaml). */
const GATEWAY_NODE_OPTIONS = '--max-old-space-size=128 --max-semi-space-size=16';

function verdict(ok) {
  return ok ? 'PASS' : 'MISS';
}

/** CPU seconds (user + system) a process has used so far, read from /proc: CPU per request stays comparable on a busy machine. */
function cpuSeconds(pid) {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
}

/**
 * A new account on the gateway with its rate limits raised (benchmarks measure the path, not the
 * spec's budgets) and `call(method, url, body)`: JSON in and out, throwing on any status >= 300.
 */
async function benchAccount(gw, name) {
  const { createAccount, adminRequest } = require('@mailer/testing');
  const { accountId, apiKey } = await createAccount(gw, name);
  await adminRequest(gw, 'PATCH', `/admin/accounts/${accountId}/rate-limits`, { perMinute: 1_000_000, perHour: 1_000_000 });
  async function call(method, url, body) {
    const res = await fetch(`${gw.url}${url}`, {
      method,
      headers: { 'x-api-key': apiKey, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const json = res.status === 204 ? null : await res.json();
    if (res.status >= 300) throw new Error(`${method} ${url} -> ${res.status} ${JSON.stringify(json).slice(0, 500)}`);
    return json;
  }
  return { accountId, apiKey, call };
}

/**
 * A warm-up (`opts.warmup` s, default 3: JIT, connections, caches), then `load(opts)` while metering
 * the CPU of each named process (pid): the load result plus `cpuUs`, {name: CPU µs per successful
 * request}. Shows where a 2-core machine's time goes (the load tool itself is `process.pid`).
 */
async function measure({ warmup = 3, ...opts }, pids) {
  if (warmup > 0) await load({ ...opts, duration: warmup });
  const before = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, cpuSeconds(pid)]));
  const result = await load(opts);
  const cpuUs = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, Math.round(((cpuSeconds(pid) - before[name]) * 1e6) / result.ok)]));
  return { ...result, cpuUs };
}

/** Starts a calibration server of bench/baseline-server.js in its own process: {url, pid, stop()}. */
async function startBaseline(kind, arg) {
  const { fork } = require('node:child_process');
  // A NATS-backed baseline connects as the harness's operator (its servers require credentials).
  const { operatorAuth } = require('@mailer/testing/internal-access');
  const env = { ...process.env, NATS_USER: operatorAuth.user, NATS_PASSWORD: operatorAuth.pass };
  const child = fork(require.resolve('./baseline-server'), [kind, arg], { env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const { port } = await new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`baseline ${kind} exited (${code}) before listening`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid,
    stop: () => new Promise((resolve) => (child.exitCode !== null ? resolve() : (child.once('exit', resolve), child.kill()))),
  };
}

/**
 * A local SMTP sink in this process that accepts everything: {url, times (arrival ms), reset(), close()}.
 * `onMail(envelope, head)`, if given, is called at each arrival with the envelope and the first 8 KB
 * of the message (its headers). For CPU per mail, use the sink in its own process (startSink).
 */
async function startSmtpSink({ onMail } = {}) {
  const { SMTPServer } = require('smtp-server');
  const { freePort } = require('@mailer/testing');
  const port = await freePort();
  const times = [];
  const server = new SMTPServer({
    logger: false, authOptional: true, disabledCommands: ['AUTH', 'STARTTLS'], maxClients: 1000,
    onData(stream, session, callback) {
      let head = '';
      stream.on('data', (chunk) => {
        if (onMail && head.length < 8192) head += chunk.toString();
      });
      stream.on('end', () => {
        times.push(Date.now());
        onMail?.(session.envelope, head);
        callback(null, 'Ok');
      });
    },
  });
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { url: `smtp://127.0.0.1:${port}`, times, reset: () => (times.length = 0), close: () => new Promise((resolve) => server.close(resolve)) };
}

/** The messaging service's SMTP_POOL_SIZE and MAIL_SEND_CONCURRENCY defaults: what the raw floor below uses too. */
const RAW_POOL = 5;
const RAW_CONCURRENCY = 20;

/**
 * The floor a mail pipeline is compared with: one pooled nodemailer transport, RAW_CONCURRENCY sends
 * outstanding, `n` pre-rendered newsletter mails (`from`, `subject(i)`, `html`) to the sink: mails/s.
 */
async function rawNodemailer(sink, n, { from, subject, html }) {
  const crypto = require('node:crypto');
  const path = require('node:path');
  const nodemailer = require(require.resolve('nodemailer', { paths: [path.join(__dirname, '..', 'services', 'messaging')] }));
  const transport = nodemailer.createTransport({ url: sink.url, pool: true, maxConnections: RAW_POOL, maxMessages: Infinity });
  sink.reset();
  const start = Date.now();
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      await transport.sendMail({
        from, to: `raw${i}@example.org`, subject: subject(i), html, text: 'Hi reader',
        messageId: `<${crypto.randomUUID()}@example.com>`, envelope: { from: 'bounce@bounces.localhost', to: [`raw${i}@example.org`] },
        headers: { 'List-Unsubscribe': '<https://mail.example/u/token>', 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
      });
    }
  };
  await Promise.all(Array.from({ length: RAW_CONCURRENCY }, worker));
  transport.close();
  return (n * 1000) / (Date.now() - start);
}
const rawNodemailerLabel = `raw nodemailer (pooled ${RAW_POOL}, ${RAW_CONCURRENCY} in flight, pre-rendered)`;

let submissionNo = 0;
/**
 * autocannon `requests` of public form submissions: a new address each, from 1,000 reader addresses
 * (X-Forwarded-For, as a proxy in front of the gateway forwards them; one address would make every
 * request contend for one rate-limit key, which no real audience does).
 */
function submissionRequests() {
  return [{
    method: 'POST',
    setupRequest: (req) => {
      const n = ++submissionNo;
      const headers = { ...req.headers, 'content-type': 'application/json', 'x-forwarded-for': `10.0.${(n % 1000) >> 8}.${n % 256}` };
      return { ...req, headers, body: JSON.stringify({ values: { email: `reader${n}@example.org` } }) };
    },
  }];
}

/**
 * Waits until the sink (startSmtpSink) holds a mail for every accepted submission (`accepted()`
 * counts them), or until nothing arrived for `quietMs`: the time of the last mail.
 */
async function drained(sink, accepted, quietMs = 20_000) {
  const target = await accepted();
  let last = -1;
  let quietSince = Date.now();
  while (sink.times.length < target) {
    if (sink.times.length !== last) (last = sink.times.length), (quietSince = Date.now());
    else if (Date.now() - quietSince > quietMs) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return sink.times.at(-1) ?? 0;
}

/**
 * A bench helper script forked as its own process: resolves once it sent its first IPC message
 * ({port} or {ready}) with {pid, hello, call(request) -> its answer, stop()}. Requests carry an id and
 * are answered by the message with the same id.
 */
async function forkChild(script, env = process.env) {
  const { fork } = require('node:child_process');
  const child = fork(require.resolve(script), [], { env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const hello = await new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`${script} exited (${code}) before it was ready`)));
  });
  const answers = new Map();
  let next = 0;
  child.on('message', (msg) => {
    const answer = answers.get(msg.id);
    if (!answer) return;
    answers.delete(msg.id);
    if (msg.error) answer.reject(new Error(msg.error));
    else answer.resolve(msg);
  });
  return {
    pid: child.pid,
    hello,
    call: (request) => new Promise((resolve, reject) => {
      const id = ++next;
      answers.set(id, { resolve, reject });
      child.send({ ...request, id });
    }),
    stop: () => new Promise((resolve) => (child.exitCode !== null ? resolve() : (child.once('exit', resolve), child.kill()))),
  };
}

/**
 * The SMTP sink (bench/smtp-sink.js) in its own process: {url, pid, reset(), until(n) -> {count,
 * first, last}, stats() -> {count, first, last, cpuUs}, close()}.
 */
async function startSink() {
  const child = await forkChild('./smtp-sink');
  return {
    url: `smtp://127.0.0.1:${child.hello.port}`,
    pid: child.pid,
    reset: () => child.call({ cmd: 'reset' }),
    until: (n) => child.call({ cmd: 'until', n }),
    stats: () => child.call({ cmd: 'stats' }),
    close: child.stop,
  };
}

/**
 * The pooled nodemailer baseline (bench/nodemailer-sender.js) in its own process: {pid,
 * send({url, n, pool, concurrency, mail, prefix}) -> {ms, cpuUs}, close()}.
 */
async function startNodemailerSender() {
  const child = await forkChild('./nodemailer-sender');
  return { pid: child.pid, send: (request) => child.call({ cmd: 'send', ...request }), close: child.stop };
}

/** The median of numbers. */
function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

module.exports = { GATEWAY_NODE_OPTIONS, load, measure, median, rssMb, verdict, cpuSeconds, benchAccount, startBaseline, startSmtpSink, rawNodemailer, rawNodemailerLabel, forkChild, startSink, startNodemailerSender, submissionRequests, drained };
