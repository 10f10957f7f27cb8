#!/usr/bin/env node
// Runs the whole system on one machine as plain processes (what `npm run up` ends with):
// nats-server (JetStream, data in .data/nats), maildev when SMTP_URL is unset (scripts/run-local-mail.js),
// the six gRPC services (embedded storage in .data/<service>) and the gateway, all on loopback. Logs go to .data/logs/<name>.log.
// Internal traffic is authenticated as in production: nats-server runs with a user per process
// (.data/nats.conf, its permissions derived from each process's declarations) and every gRPC call is
// signed; the credentials are generated once into .data/secrets.json.
// A child that dies is restarted with backoff (see supervise); only Ctrl-C / SIGTERM stops every
// child. The next run keeps the data. One runner per data directory
// (<data>/runner.lock).
'use strict';
const { spawn, execFileSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const { mailPorts, mailSettings, maildevCommand, mailBanner } = require('./run-local-mail');

const root = path.resolve(__dirname, '..');
const env = process.env;
// Knobs (all optional): where the data lives and which ports are used. A port (or base port) of 0
// means any free port: the runner picks them all before starting anything, so every process is
// given the complete table of addresses (a service calls its peers too, not only the gateway).
// A relative MAILER_DATA_DIR is taken from where the user ran npm (INIT_CWD; npm runs scripts at the
// repository root), as scripts/admin.js does.
const userCwd = env.INIT_CWD || process.cwd();
const data = env.MAILER_DATA_DIR ? path.resolve(userCwd, env.MAILER_DATA_DIR) : path.join(root, '.data');
const logs = path.join(data, 'logs');
const port = (name, fallback) => Number(env[name] ?? fallback);
const GATEWAY_PORT = port('GATEWAY_PORT', 8080);
const ADMIN_PORT = port('ADMIN_PORT', 8081);
const NATS_PORT = port('NATS_PORT', 4222);
// The first of SERVICE_PORTS in @mailer/kit (services in the same order); test/ports.test.ts checks they agree.
const GRPC_BASE_PORT = port('GRPC_BASE_PORT', 7051);
const METRICS_BASE_PORT = port('METRICS_BASE_PORT', 9100);
const SERVICES = ['subscriber', 'segment', 'form', 'rss', 'messaging', 'webhook'];
// Heap caps: the gateway and messaging as the chart runs them (gateway RSS < 200 MB under load;
// messaging 343 MB at the peak of an RSS issue to 100,000 readers, 502 MB uncapped); the subscriber service for
// the embedded store's worst case (1,000,000 subscribers in ~840 MB RSS instead of ~1.2 GB). The
// segment service holds every contact with its orders in memory (~5 GB at 1,000,000 contacts): no
// cap, but a larger young generation, which loads its data ~20% faster at start (bench/segments.js).
const NODE_OPTIONS = {
  gateway: { NODE_OPTIONS: '--max-old-space-size=128 --max-semi-space-size=16' },
  subscriber: { NODE_OPTIONS: '--max-old-space-size=768' },
  segment: { NODE_OPTIONS: '--max-semi-space-size=32' },
  messaging: { NODE_OPTIONS: '--max-old-space-size=256' },
};
const children = [];
let stopping = false;

function secrets() {
  const file = path.join(data, 'secrets.json');
  const fresh = {
    apiKeyMasterKey: () => crypto.randomBytes(32).toString('base64'),
    adminToken: () => crypto.randomBytes(32).toString('hex'),
    trackingSecret: () => crypto.randomBytes(32).toString('base64url'),
    secretSealingKey: () => crypto.randomBytes(32).toString('base64'),
    // Each process's NATS password is derived from it (natsPassword); .data/nats.conf lists them all,
    // the operator's (every permission, for the nats CLI) included.
    natsSecret: () => crypto.randomBytes(32).toString('base64url'),
    internalGrpcSecret: () => crypto.randomBytes(32).toString('base64url'),
  };
  const stored = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : {};
  // A data directory from an older version lacks the newer secrets: add them, keep the others.
  const missing = Object.keys(fresh).filter((k) => !stored[k]);
  for (const k of missing) stored[k] = fresh[k]();
  if (missing.length) fs.writeFileSync(file, JSON.stringify(stored, null, 2), { mode: 0o600 });
  return stored;
}

const natsPassword = (natsSecret, user) => crypto.createHmac('sha256', natsSecret).update(`nats:${user}`).digest('base64url');

/**
 * Writes <data>/nats.conf (0600): one NATS user per process with the permissions its build declares,
 * and the operator user (every permission, for the nats CLI). Rewritten at every start, so a rebuilt
 * process with a new consumer gets its permission.
 */
function natsConfig(natsSecret) {
  const { natsServerConfig } = require(path.join(root, 'packages/testing/dist/internal-access'));
  const file = path.join(data, 'nats.conf');
  fs.writeFileSync(file, natsServerConfig((user) => natsPassword(natsSecret, user)), { mode: 0o600 });
  fs.chmodSync(file, 0o600);
  return file;
}

function natsServerBinary() {
  for (const candidate of ['nats-server', '/usr/sbin/nats-server', '/usr/bin/nats-server']) {
    try {
      execFileSync(candidate, ['--version'], { stdio: 'ignore' });
      return candidate;
    } catch {}
  }
  throw new Error('nats-server not found: apt-get install -y nats-server');
}

// A child that dies is restarted, as Kubernetes would: after 1 s, 2 s, 4 s ... at most 30 s; the
// delay starts again at 1 s once a child has stayed ready for a minute. Only while starting the
// system does a death stop everything: a first start that fails is a configuration or port
// problem that retrying would hide.
const RESTART_MAX_DELAY_MS = 30_000;
const HEALTHY_AFTER_MS = 60_000;
let running = false;

const logFile = (name) => path.join(logs, `${name}.log`);
const lastLines = (name, n = 15) => (fs.existsSync(logFile(name)) ? fs.readFileSync(logFile(name), 'utf8').trimEnd().split('\n').slice(-n).join('\n') : '');

/**
 * Runs a child (output to .data/logs/<name>.log) and keeps it running; resolves with what
 * `isReady` reads from its output once it first says it is ready.
 */
function supervise(name, command, args, childEnv, isReady) {
  const proc = { name, child: null, timer: null, failures: 0 };
  children.push(proc);
  return new Promise((resolveFirst) => {
    let starts = 0;
    const launch = () => {
      proc.timer = null;
      if (stopping) return;
      starts++;
      const log = fs.createWriteStream(logFile(name), { flags: 'a' });
      const child = spawn(command, args, { cwd: root, env: { ...env, ...childEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
      proc.child = child;
      let seen = '';
      let readyAt;
      const onData = (chunk) => {
        log.write(chunk);
        if (seen === null) return;
        seen += chunk.toString();
        const info = isReady(seen);
        if (!info) return;
        seen = null;
        readyAt = Date.now();
        if (starts === 1) resolveFirst(info);
        else console.error(`up: ${name} is ready again (pid ${child.pid})`);
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      child.once('error', (err) => log.write(`[runner] ${err.message}\n`));
      // 'close': the child's output is all read, so its last lines are in the log.
      child.once('close', (code, signal) => {
        log.end(() => {
          if (stopping) return;
          const cause = signal || `exit code ${code}`;
          const tail = lastLines(name);
          if (!running) {
            console.error(`up: ${name} exited (${cause}) while starting. Last lines of ${logFile(name)}:\n${tail}`);
            void stopAll(1);
            return;
          }
          if (readyAt !== undefined && Date.now() - readyAt >= HEALTHY_AFTER_MS) proc.failures = 0;
          const delay = Math.min(1000 * 2 ** proc.failures, RESTART_MAX_DELAY_MS);
          proc.failures++;
          const note = `${name} (pid ${child.pid}) exited (${cause}); restarting it in ${delay / 1000} s (restart ${starts})`;
          fs.appendFileSync(logFile(name), `[runner] ${new Date().toISOString()} ${note}\n`);
          console.error(`up: ${note}. Last lines of ${logFile(name)}:\n${tail.replace(/^/gm, '  | ')}`);
          proc.timer = setTimeout(launch, delay);
        });
      });
    };
    launch();
  });
}

const readyLine = (text) => {
  const line = text.split('\n').find((l) => l.includes('"msg":"ready"'));
  return line ? JSON.parse(line) : undefined;
};

function waitForPort(port, timeoutMs = 15000) {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const attempt = () => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => socket.end() && resolve());
      socket.once('error', () => {
        socket.destroy();
        if (Date.now() > deadline) reject(new Error(`nothing listens on port ${port} after ${timeoutMs} ms`));
        else setTimeout(attempt, 100);
      });
    };
    attempt();
  });
}

async function stopAll(code) {
  if (stopping) return;
  stopping = true;
  // Gateway first (stops taking requests), then services, then NATS. A pending restart is cancelled.
  for (const proc of children) clearTimeout(proc.timer);
  for (const { child } of [...children].reverse()) {
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await new Promise((resolve) => {
        // as long as a process may take to drain (its longest request deadline, then exit)
        const t = setTimeout(() => child.kill('SIGKILL'), require('../packages/kit/dist/time-limits').SHUTDOWN_EXIT_MS);
        child.once('exit', () => (clearTimeout(t), resolve()));
      });
    }
  }
  unlock();
  process.exit(code);
}

/**
 * One runner per data directory: a second one would start a second nats-server on the same
 * JetStream store (and services on the same embedded stores) before failing on a port. The lock
 * file holds the runner's PID; a lock whose PID is no longer a runner is stale and taken over.
 */
const lockFile = path.join(data, 'runner.lock');
let locked = false;
function lock() {
  fs.mkdirSync(data, { recursive: true });
  for (;;) {
    try {
      fs.writeFileSync(lockFile, `${process.pid}\n`, { flag: 'wx' });
      locked = true;
      process.on('exit', unlock);
      return;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
    }
    refuseIfLocked();
    fs.rmSync(lockFile, { force: true }); // stale: its runner is gone
  }
}
/** Exits with the reason when a live runner holds the data directory's lock. */
function refuseIfLocked() {
  let holder;
  try {
    holder = Number.parseInt(fs.readFileSync(lockFile, 'utf8'), 10);
  } catch (err) {
    if (err.code === 'ENOENT') return;
    throw err;
  }
  if (isRunner(holder)) {
    console.error(`up: another runner (pid ${holder}) is using ${data}; stop it first (Ctrl-C in its terminal, or kill ${holder}), or set MAILER_DATA_DIR to another directory`);
    process.exit(1);
  }
}
function unlock() {
  if (locked) fs.rmSync(lockFile, { force: true });
  locked = false;
}
/** The PID is alive and (where /proc tells) is a runner, not an unrelated process that reused it. */
function isRunner(pid) {
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if (err.code !== 'EPERM') return false;
  }
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('run-local');
  } catch {
    return !fs.existsSync('/proc'); // no /proc: trust kill(0)
  }
}

/** A port nothing listens on now (the kernel's pick), never one already handed out in this run. */
const taken = new Set();
async function freePort() {
  for (;;) {
    const server = net.createServer();
    await new Promise((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
    const { port: picked } = server.address();
    await new Promise((resolve) => server.close(resolve));
    if (!taken.has(picked)) return taken.add(picked), picked;
  }
}
const claim = (p) => (taken.add(p), p);
const portOf = async (configured) => (configured === 0 ? freePort() : claim(configured));
const portAt = async (base, i) => (base === 0 ? freePort() : claim(base + i));
const bindable = (p) =>
  new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false)).listen(p, '127.0.0.1', () => server.close(() => resolve(true)));
  });
/**
 * The ports of the email half (mail catcher, bounce listener, reader-facing HTTP): `configured`,
 * or when something already listens there the next free port after it (said on the console);
 * 0: any free port. A moved port skips `avoid` (ports other settings ask for). The other ports stay
 * exact: a busy one stops the start with the cause.
 */
async function movable(name, configured, avoid = new Set()) {
  if (configured === 0) return freePort();
  for (let p = configured; p < configured + 100 && p <= 65535; p++) {
    if (taken.has(p) || (p !== configured && avoid.has(p)) || !(await bindable(p))) continue;
    if (p !== configured) console.error(`up: port ${configured} (${name}) is in use; using ${p}`);
    return claim(p);
  }
  throw new Error(`no free port in ${configured}-${configured + 99} for ${name}`);
}

/** Every port of the run, fixed before anything starts (a restarted process keeps its address). */
async function portTable() {
  const grpc = {};
  for (const [i, s] of SERVICES.entries()) grpc[`${s.toUpperCase()}_GRPC_ADDR`] = `127.0.0.1:${await portAt(GRPC_BASE_PORT, i)}`;
  const metrics = {};
  for (const [i, name] of ['gateway', ...SERVICES].entries()) metrics[name] = await portAt(METRICS_BASE_PORT, i);
  const fixed = { nats: await portOf(NATS_PORT), gateway: await portOf(GATEWAY_PORT), admin: await portOf(ADMIN_PORT), grpc, metrics };
  return { ...fixed, mail: await mailPorts(env, movable) };
}

function admin(args, adminEnv) {
  return JSON.parse(execFileSync(process.execPath, [path.join(root, 'scripts', 'admin.js'), ...args], { env: { ...env, ...adminEnv }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }));
}

async function main() {
  lock(); // before anything reads or writes the data directory
  // Data and logs readable by this user only: umask 077 (every child inherits it), and what an older
  // version left with wider modes narrowed (the services do the same for their own directories).
  require('../packages/kit/dist/file-modes').ownerOnlyFiles(data, data, (extra, msg) => console.error(`up: ${msg}: ${extra.path} (${extra.err})`));
  fs.mkdirSync(logs, { recursive: true });
  const { apiKeyMasterKey, adminToken, trackingSecret, secretSealingKey, natsSecret, internalGrpcSecret } = secrets();
  process.on('SIGINT', () => void stopAll(0));
  process.on('SIGTERM', () => void stopAll(0));

  const ports = await portTable();
  const nats = supervise('nats', natsServerBinary(), ['-c', natsConfig(natsSecret), '-js', '-a', '127.0.0.1', '-p', String(ports.nats), '-sd', path.join(data, 'nats')], {}, (text) => text.includes('Server is ready') && {});
  // Without SMTP_URL, maildev catches every mail the messaging service sends (its web UI shows it).
  const catcher = env.SMTP_URL ? undefined : maildevCommand(data, ports.mail);
  const maildev = catcher && supervise('maildev', process.execPath, catcher.args, {}, catcher.isReady);
  await Promise.race([nats, waitForPort(ports.nats)]);
  if (maildev) await Promise.race([maildev, Promise.all([waitForPort(ports.mail.MAIL_SMTP_PORT), waitForPort(ports.mail.MAIL_UI_PORT)])]);
  // the settings (docs/configuration.md): each setting to the process that reads it.
  const mail = mailSettings(env, ports.mail, { gatewayPort: ports.gateway, trackingSecret, secretSealingKey });

  // Every process gets every service's address: the gateway dials them all, and services dial
  // their peers (segment -> subscriber, subscriber -> every source of field usages and segments).
  // Loopback only, every listener: gRPC (the addresses above), /metrics, the gateway, NATS (-a).
  const common = { NATS_URL: `nats://127.0.0.1:${ports.nats}`, DATA_DIR: data, LOG_LEVEL: env.LOG_LEVEL || 'info', METRICS_HOST: '127.0.0.1', INTERNAL_GRPC_SECRET: internalGrpcSecret, ...ports.grpc };
  // Each process connects to NATS as its own user.
  const natsUser = (name) => ({ NATS_USER: name, NATS_PASSWORD: natsPassword(natsSecret, name) });
  // The webhook service seals its subscriptions' signing secrets under SECRET_SEALING_KEY.
  const sealing = { webhook: { SECRET_SEALING_KEY: env.SECRET_SEALING_KEY || secretSealingKey } };
  await Promise.all(
    SERVICES.map((s) =>
      supervise(
        s,
        process.execPath,
        [`services/${s}/dist/main.js`],
        { ...common, ...natsUser(s), METRICS_PORT: String(ports.metrics[s]), MAILER_SERVICE: s, ...NODE_OPTIONS[s], ...mail[s], ...sealing[s] },
        readyLine,
      ),
    ),
  );
  await supervise(
    'gateway',
    process.execPath,
    ['gateway/dist/main.js'],
    {
      ...common,
      ...natsUser('gateway'),
      GATEWAY_HOST: '127.0.0.1',
      GATEWAY_PORT: String(ports.gateway),
      ADMIN_PORT: String(ports.admin),
      METRICS_PORT: String(ports.metrics.gateway),
      API_KEY_MASTER_KEY: apiKeyMasterKey,
      ADMIN_TOKEN: adminToken,
      MAILER_SERVICE: 'gateway',
      ...NODE_OPTIONS.gateway,
      ...mail.gateway,
    },
    readyLine,
  );

  const adminUrl = `http://127.0.0.1:${ports.admin}`;
  fs.writeFileSync(path.join(data, 'admin.json'), JSON.stringify({ adminUrl, adminToken }, null, 2), { mode: 0o600 });
  const adminEnv = { ADMIN_URL: adminUrl, ADMIN_TOKEN: adminToken };
  const keyFile = path.join(data, 'dev-api-key');
  const accountFile = path.join(data, 'dev-account-id');
  let apiKey;
  if (fs.existsSync(accountFile)) {
    // The account survives restarts (its key lives in NATS KV): show its key again, or give it a
    // new one if an operator deleted it.
    const accountId = fs.readFileSync(accountFile, 'utf8').trim();
    ({ apiKey } = admin(['create-key', '--account', accountId], adminEnv));
  } else {
    const created = admin(['create-account', '--name', 'development'], adminEnv);
    fs.writeFileSync(accountFile, created.accountId, { mode: 0o600 });
    apiKey = created.apiKey;
  }
  fs.writeFileSync(keyFile, apiKey, { mode: 0o600 });

  const url = `http://127.0.0.1:${ports.gateway}`;
  const shown = (file) => {
    const relative = path.relative(userCwd, file);
    return relative && !relative.startsWith('..') ? relative : file;
  };
  // The CLI finds admin.json through MAILER_DATA_DIR: name it when it is not the default.
  const quoted = (text) => (/^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`);
  const cliEnv = env.MAILER_DATA_DIR ? `MAILER_DATA_DIR=${quoted(data)} ` : '';
  const banner = mailBanner(env, ports.mail, mail);
  console.log(`
mailer is up (logs in ${shown(logs)}/, data in ${shown(data)}/; Ctrl-C stops everything)
  gateway:  ${url}   (OpenAPI: ${url}/openapi.json, docs: ${url}/docs)
  API key:  ${apiKey}   (also in ${shown(keyFile)})
${banner.mail}
  try:      curl -H "X-API-Key: $(cat ${quoted(shown(keyFile))})" ${url}/subscribers
  operator: ${cliEnv}npm run --silent admin -- show-key --account $(cat ${quoted(shown(accountFile))})
${banner.more}
`);
  running = true; // from now on a child that dies is restarted
}

// `--check` (scripts/up.sh, before it installs and builds): only refuse early, take no lock.
if (process.argv.includes('--check')) {
  refuseIfLocked();
} else {
  main().catch((err) => {
    console.error(`up: ${err.message}`);
    void stopAll(1);
  });
}
