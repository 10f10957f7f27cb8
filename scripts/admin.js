#!/usr/bin/env node
// Operator CLI for the gateway's admin listener (accounts, API keys, rate limits).
//
//   npm run --silent admin -- create-account --name "Acme"       -> {"accountId","apiKey"}
//   npm run --silent admin -- create-key|rotate-key|delete-key|show-key --account <accountId>
//   npm run --silent admin -- get-limits --account <accountId>
//   npm run --silent admin -- set-limits --account <accountId> [--per-minute N] [--per-hour N]
//                                        [--events-per-second N] [--events-burst N]
//   npm run --silent admin -- reseal-secrets                     -> API keys, webhook secrets and DKIM keys re-sealed
//
// Reads ADMIN_URL and ADMIN_TOKEN from the environment, else from <MAILER_DATA_DIR>/admin.json
// ({"adminUrl","adminToken"}, written by the local runner; MAILER_DATA_DIR defaults to .data at the
// repository root, and a relative one is taken from where npm was run, as the runner does). Prints JSON on stdout; on an error
// prints {"errorId","message"} on stderr and exits 1. Plain Node (>= 20), no build step.
'use strict';

const fs = require('node:fs');
const path = require('node:path');

const USAGE = `usage: admin <command> [options]
  create-account --name NAME
  create-key     --account ACCOUNT_ID   (returns the existing key unchanged if there is one)
  show-key       --account ACCOUNT_ID
  rotate-key     --account ACCOUNT_ID   (the previous value is refused at once)
  delete-key     --account ACCOUNT_ID   (the value stops working at once; data is kept)
  get-limits     --account ACCOUNT_ID
  set-limits     --account ACCOUNT_ID [--per-minute N] [--per-hour N] [--events-per-second N] [--events-burst N]
  reseal-secrets                       (after a key rotation: everything sealed under API_KEY_MASTER_KEY_PREVIOUS
                                        or SECRET_SEALING_KEY_PREVIOUS, or stored in clear, re-sealed under the
                                        current keys; counts and failures per kind)
environment: ADMIN_URL, ADMIN_TOKEN (else <MAILER_DATA_DIR or .data>/admin.json)`;

class CliError extends Error {
  constructor(errorId, message) {
    super(message);
    this.errorId = errorId;
  }
}

function parseArgs(argv) {
  const [command, ...rest] = argv;
  const options = {};
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i];
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (!m) throw new CliError('usage', `unexpected argument "${arg}"\n${USAGE}`);
    let value = m[2];
    if (value === undefined) {
      value = rest[i + 1];
      if (value === undefined || value.startsWith('--')) throw new CliError('usage', `--${m[1]} needs a value`);
      i++;
    }
    options[m[1]] = value;
  }
  return { command, options };
}

function settings() {
  const { ADMIN_URL, ADMIN_TOKEN, MAILER_DATA_DIR, INIT_CWD } = process.env;
  let adminUrl = ADMIN_URL;
  let adminToken = ADMIN_TOKEN;
  // The runner's data directory: same rule as scripts/run-local.js.
  const data = MAILER_DATA_DIR ? path.resolve(INIT_CWD || process.cwd(), MAILER_DATA_DIR) : path.resolve(__dirname, '..', '.data');
  const file = path.join(data, 'admin.json');
  if (!adminUrl || !adminToken) {
    let saved = {};
    try {
      saved = JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch (err) {
      if (err.code !== 'ENOENT') throw new CliError('config', `cannot read ${file}: ${err.message}`);
    }
    adminUrl = adminUrl || saved.adminUrl;
    adminToken = adminToken || saved.adminToken;
  }
  if (!adminUrl || !adminToken) {
    throw new CliError('config', `set ADMIN_URL and ADMIN_TOKEN (or start the local runner, which writes ${file})`);
  }
  return { adminUrl: adminUrl.replace(/\/+$/, ''), adminToken };
}

function required(options, name) {
  const value = options[name];
  if (value === undefined || value === '') throw new CliError('usage', `--${name} is required\n${USAGE}`);
  return value;
}

function positiveInteger(options, name) {
  const raw = options[name];
  if (raw === undefined) return undefined;
  if (!/^[1-9]\d*$/.test(raw)) throw new CliError('usage', `--${name} must be a positive integer`);
  return Number(raw);
}

/** The admin request of each command: [method, path, body]. */
function requestFor(command, options) {
  const account = () => `/admin/accounts/${encodeURIComponent(required(options, 'account'))}`;
  switch (command) {
    case 'create-account':
      return ['POST', '/admin/accounts', { name: required(options, 'name') }];
    case 'create-key':
      return ['POST', `${account()}/api-key`];
    case 'show-key':
      return ['GET', `${account()}/api-key`];
    case 'rotate-key':
      return ['POST', `${account()}/api-key/rotate`];
    case 'delete-key':
      return ['DELETE', `${account()}/api-key`];
    case 'get-limits':
      return ['GET', `${account()}/rate-limits`];
    case 'reseal-secrets':
      return ['POST', '/admin/reseal-secrets'];
    case 'set-limits': {
      const body = {
        perMinute: positiveInteger(options, 'per-minute'),
        perHour: positiveInteger(options, 'per-hour'),
        eventsPerSecond: positiveInteger(options, 'events-per-second'),
        eventsBurst: positiveInteger(options, 'events-burst'),
      };
      for (const k of Object.keys(body)) if (body[k] === undefined) delete body[k];
      if (Object.keys(body).length === 0) throw new CliError('usage', `set-limits needs at least one limit\n${USAGE}`);
      return ['PATCH', `${account()}/rate-limits`, body];
    }
    default:
      throw new CliError('usage', `${command ? `unknown command "${command}"` : 'no command'}\n${USAGE}`);
  }
}

async function main() {
  const { command, options } = parseArgs(process.argv.slice(2));
  if (command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const [method, urlPath, body] = requestFor(command, options);
  const { adminUrl, adminToken } = settings();
  let res;
  try {
    res = await fetch(`${adminUrl}${urlPath}`, {
      method,
      headers: { authorization: `Bearer ${adminToken}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
      // Re-sealing scans every account and subscription: it may take minutes.
      signal: AbortSignal.timeout(command === 'reseal-secrets' ? 11 * 60_000 : 15_000),
    });
  } catch (err) {
    throw new CliError('admin_unreachable', `cannot reach the admin listener at ${adminUrl}: ${err.cause?.message ?? err.message}`);
  }
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    throw new CliError('bad_response', `admin listener answered ${res.status} with a non-JSON body`);
  }
  if (!res.ok) throw new CliError(json.errorId ?? `http_${res.status}`, json.message ?? `HTTP ${res.status}`);
  process.stdout.write(`${JSON.stringify(json)}\n`);
}

main().catch((err) => {
  const out = err instanceof CliError ? { errorId: err.errorId, message: err.message } : { errorId: 'internal_error', message: String(err?.message ?? err) };
  process.stderr.write(`${JSON.stringify(out)}\n`);
  process.exit(1);
});
