// The email half of `npm run up` (scripts/run-local.js): the settings (docs/configuration.md) for the
// processes that read them, and the local mail catcher (maildev) that stands in for a relay when
// SMTP_URL is unset. Kept apart from the runner's process supervision so each stays readable.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');

// Runner knobs for ports (0 = any free port; a busy one moves to the next free one, said on the
// console). MESSAGING_HTTP_ADDR / FORM_HTTP_ADDR given in the environment are passed as given.
const MAIL_PORT_DEFAULTS = { MAIL_SMTP_PORT: 1025, MAIL_UI_PORT: 1080, BOUNCE_SMTP_PORT: 2525 };
const HTTP_ADDR_DEFAULTS = { MESSAGING_HTTP_ADDR: 7155, FORM_HTTP_ADDR: 7153 };
// Development exceptions to the outbound URL guard (webhooks and RSS may call loopback over http).
const OUTBOUND_DEFAULTS = { OUTBOUND_ALLOW_HTTP: 'true', OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8,::1/128' };

/**
 * Every port and address of the email half, fixed before anything starts. `movable(name, port)`
 * is the runner's allocator (0 = any free, busy -> next free).
 */
async function mailPorts(env, movable) {
  const ports = {};
  const wanted = {};
  for (const [name, fallback] of Object.entries(MAIL_PORT_DEFAULTS)) {
    // maildev runs only without SMTP_URL: its ports are not even looked for otherwise.
    if (name.startsWith('MAIL_') && env.SMTP_URL) continue;
    const configured = Number(env[name] ?? fallback);
    if (!Number.isInteger(configured) || configured < 0 || configured > 65535) throw new Error(`${name} must be a port number (0 = any free port), not ${JSON.stringify(env[name])}`);
    wanted[name] = configured;
  }
  for (const [name, fallback] of Object.entries(HTTP_ADDR_DEFAULTS)) if (!env[name]) wanted[name] = fallback;
  // A port moved off a busy one never lands on a port another of these settings asks for.
  const others = (name) => new Set(Object.entries(wanted).filter(([n, p]) => n !== name && p !== 0).map(([, p]) => p));
  for (const [name, configured] of Object.entries(wanted)) {
    const port = await movable(name, configured, others(name));
    ports[name] = name in HTTP_ADDR_DEFAULTS ? `127.0.0.1:${port}` : port;
  }
  for (const name of Object.keys(HTTP_ADDR_DEFAULTS)) if (env[name]) ports[name] = env[name];
  return ports;
}

/** The relay's address without its credentials (for the console). */
function shownSmtpUrl(url) {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`;
  } catch {
    return '(unparsable SMTP_URL)';
  }
}

/**
 * Per process, the section 4 settings it reads. A setting in the runner's environment wins over
 * the runner's default (and every other variable of the environment reaches every child anyway).
 */
function mailSettings(env, ports, { gatewayPort, trackingSecret, secretSealingKey }) {
  const pick = (defaults) => Object.fromEntries(Object.entries(defaults).map(([k, v]) => [k, env[k] ?? v]));
  const publicBaseUrl = env.PUBLIC_BASE_URL || `http://127.0.0.1:${gatewayPort}`;
  // TRACKING_SECRET also signs the form service's confirmation tokens (docs/configuration.md).
  const secret = env.TRACKING_SECRET || trackingSecret;
  const outbound = pick(OUTBOUND_DEFAULTS);
  return {
    messaging: {
      PUBLIC_BASE_URL: publicBaseUrl,
      SMTP_URL: env.SMTP_URL || `smtp://127.0.0.1:${ports.MAIL_SMTP_PORT}`,
      TRACKING_SECRET: secret,
      MESSAGING_HTTP_ADDR: ports.MESSAGING_HTTP_ADDR,
      BOUNCE_SMTP_PORT: String(ports.BOUNCE_SMTP_PORT),
      ...pick({ BOUNCE_SMTP_HOST: '127.0.0.1', BOUNCE_DOMAIN: 'bounces.localhost', MAIL_DELIVERY_CONFIRMATION: 'accept' }),
      // Development: any sender and page domain, no DNS proof (printed as a warning). The sealing key
      // (generated into secrets.json) lets sending domains be tried out all the same; DNS_SERVERS, when
      // given, reaches the service with the rest of the environment.
      ...pick({ MAIL_DOMAIN_VERIFICATION: 'off' }),
      SECRET_SEALING_KEY: env.SECRET_SEALING_KEY || secretSealingKey,
    },
    form: { PUBLIC_BASE_URL: publicBaseUrl, TRACKING_SECRET: secret, FORM_HTTP_ADDR: ports.FORM_HTTP_ADDR },
    rss: { ...outbound, ...pick({ RSS_POLL_INTERVAL_SECONDS: '600' }) },
    webhook: outbound,
    // The gateway forwards /t/* and /u/* to messaging, /public/* to form (over HTTP).
    gateway: { MESSAGING_HTTP_ADDR: ports.MESSAGING_HTTP_ADDR, FORM_HTTP_ADDR: ports.FORM_HTTP_ADDR },
  };
}

/**
 * maildev as a child of the runner: SMTP and web UI on loopback, mail kept in <data>/maildev (the
 * newest 1,000) so a restart loses none. Its package has no install scripts, so it works under npm
 * 11's default of skipping unapproved ones.
 */
function maildevCommand(data, ports) {
  const pkg = path.join(root, 'node_modules', 'maildev');
  if (!fs.existsSync(path.join(pkg, 'package.json'))) throw new Error('maildev is missing (a devDependency): run npm install, or set SMTP_URL to a relay');
  const { bin } = JSON.parse(fs.readFileSync(path.join(pkg, 'package.json'), 'utf8'));
  const dir = path.join(data, 'maildev');
  fs.mkdirSync(dir, { recursive: true });
  const args = [path.join(pkg, typeof bin === 'string' ? bin : bin.maildev)];
  args.push('--smtp', String(ports.MAIL_SMTP_PORT), '--ip', '127.0.0.1');
  args.push('--web', String(ports.MAIL_UI_PORT), '--web-ip', '127.0.0.1');
  args.push('--mail-directory', dir, '--max-emails', '1000');
  // maildev reads MAILDEV_* variables too: the runner's arguments are the truth.
  return { args, isReady: (text) => text.includes('Web Interface') && text.includes('Press Ctrl+C') && {} };
}

/** Banner lines of the email half: where mail goes (beside the gateway and key), then the rest. */
function mailBanner(env, ports, settings) {
  const mail = env.SMTP_URL
    ? `  mail:     sent through ${shownSmtpUrl(env.SMTP_URL)} (SMTP_URL; no local mail UI)`
    : `  mail UI:  http://127.0.0.1:${ports.MAIL_UI_PORT}   (every mail sent lands here; SMTP on 127.0.0.1:${ports.MAIL_SMTP_PORT})`;
  const lines = [];
  const m = settings.messaging;
  lines.push(`  bounces:  SMTP on ${m.BOUNCE_SMTP_HOST}:${m.BOUNCE_SMTP_PORT} for return paths @${m.BOUNCE_DOMAIN}; links start ${m.PUBLIC_BASE_URL}`);
  if (m.MAIL_DOMAIN_VERIFICATION !== 'required') {
    lines.push(`  warning:  MAIL_DOMAIN_VERIFICATION=${m.MAIL_DOMAIN_VERIFICATION}: any account may send from (and serve pages on) any domain without proving it owns it (development only)`);
  }
  const { OUTBOUND_ALLOW_HTTP: http, OUTBOUND_ALLOWED_CIDRS: cidrs } = settings.webhook;
  if (http === 'true' || cidrs) {
    lines.push(`  warning:  OUTBOUND_ALLOW_HTTP=${http} OUTBOUND_ALLOWED_CIDRS=${cidrs}: webhooks and RSS feeds may reach these addresses (development only)`);
  }
  return { mail, more: lines.join('\n') };
}

module.exports = { MAIL_PORT_DEFAULTS, HTTP_ADDR_DEFAULTS, mailPorts, mailSettings, maildevCommand, mailBanner };
