// The inbound SMTP listener for bounce reports (the API contract "Delivery facts ... bounces"; docs/architecture.md
// "Bounces and complaints"), on BOUNCE_SMTP_HOST:BOUNCE_SMTP_PORT. Relays send delivery status
// notifications (RFC 3464) and mailbox providers send complaint reports (ARF, RFC 5965) to the VERP
// return path of the message; nothing else is accepted:
// - RCPT TO: only return paths this system issued (signed, publicLinks().messageOfReturnPath) of a
//   stored message; anything else is refused at once with 550, so the listener relays nothing and
//   cannot be pointed at a message by a guessed address.
// - DATA: at most MAX_REPORT_BYTES (552 beyond), parsed by parseBounceReport. Failed DSN recipients
//   are a hard (5.x.x) or soft (4.x.x) bounce, delays are ignored (the relay reports again), a
//   success DSN confirms delivery when MAIL_DELIVERY_CONFIRMATION=dsn, an ARF report is a complaint
//   (except feedback type not-spam).
//   A report that is no DSN/ARF is accepted and dropped (refusing it would only make the sender
//   bounce the bounce). A store failure answers 451 so the sender retries later.
// - `postmaster` and `postmaster@<BOUNCE_DOMAIN>` (any case) are accepted and what is sent to them
//   dropped: RFC 5321 section 4.5.1 requires every SMTP server to accept the postmaster mailbox of
//   the domains it serves; nobody reads it here.
// - Connections: at most MAX_CLIENTS in all and `limits.perAddress` per client address (an IPv6
//   client's /64), 421 beyond; one idle for `limits.socketTimeoutMs` is closed. One client cannot
//   hold every slot, and idle connections do not linger.
// The effects are app/bounces.ts's; the report is only trusted for the outcome, never for addresses.
import net from 'node:net';
import { SMTPServer, type SMTPServerAddress, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import { Counter, type Logger, type Registry } from '@mailer/kit';
import { recordBounce, recordComplaint, recordDsnDelivery, type BounceDeps, type ReportOutcome } from '../app/bounces';
import type { PublicLinks } from '../app/public-links';
import { MAX_REPORT_BYTES, parseBounceReport, type BounceReport } from '../domain/bounce-report';
import { messageAccountAllAccounts } from '../../mail/store/messages';

export interface BounceListenerDeps {
  bounces: BounceDeps;
  links: Pick<PublicLinks, 'messageOfReturnPath'>;
  /** MAIL_DELIVERY_CONFIRMATION: a success DSN marks the message DELIVERED only with `dsn`. */
  deliveryConfirmation: 'accept' | 'dsn';
  logger: Logger;
  /** Where `bounce_reports_total` is registered (the process's registry). */
  registry: Registry;
  /** BOUNCE_DOMAIN: the domain whose postmaster mailbox is accepted. */
  bounceDomain: string;
  /** BOUNCE_SMTP_MAX_CONNECTIONS_PER_ADDRESS and BOUNCE_SMTP_SOCKET_TIMEOUT_SECONDS. */
  limits: { perAddress: number; socketTimeoutMs: number };
}

export interface BounceListener {
  port: number;
  stop(): Promise<void>;
}

/** Return paths one report may be addressed to (a DSN names one; more is no report we sent for). */
const MAX_RECIPIENTS = 10;

const MAX_CLIENTS = 200;

/** An SMTP answer: smtp-server sends `responseCode message`. */
const reply = (responseCode: number, message: string) => Object.assign(new Error(message), { responseCode });

interface Target {
  accountId: string;
  messageId: string;
}

/** What one client may hold: its IPv4 address, or the /64 of its IPv6 address (one host often has a whole /64). */
export function clientKey(address: string): string {
  if (!net.isIPv6(address)) return address;
  const [head, tail] = address.toLowerCase().split('::');
  const groups = head.split(':').filter(Boolean);
  if (tail !== undefined) {
    const rest = tail.split(':').filter(Boolean);
    groups.push(...Array<string>(Math.max(0, 8 - groups.length - rest.length)).fill('0'), ...rest);
  }
  return `${groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, '')).join(':')}::/64`;
}

export async function startBounceListener(deps: BounceListenerDeps, host: string, port: number): Promise<BounceListener> {
  // Per open session: the message each accepted recipient names (RCPT TO -> DATA). DATA takes the
  // recipients of its own transaction from the session's envelope (RSET empties that).
  const targets = new Map<string, Map<string, Target>>();
  const key = (address: string) => address.trim().toLowerCase();
  const postmaster = new Set(['postmaster', `postmaster@${key(deps.bounceDomain)}`]);
  // Open sessions per client (clientKey), and the client of each session counted.
  const perClient = new Map<string, number>();
  const clientOfSession = new Map<string, string>();
  const log = deps.logger;
  // What arrives and what it did: kind = report kind (bounce, complaint, delivered, delayed, unknown)
  // or refused_recipient / too_large / postmaster / connection; outcome = recorded, duplicate,
  // message_not_found, ignored, refused, dropped, failed.
  const reports = new Counter({
    name: 'bounce_reports_total',
    help: 'Inbound bounce listener: reports and refused recipients, by report kind and outcome',
    labelNames: ['kind', 'outcome'],
    registers: [deps.registry],
  });

  function onConnect(session: SMTPServerSession): void {
    const client = clientKey(session.remoteAddress);
    const open = perClient.get(client) ?? 0;
    if (open >= deps.limits.perAddress) {
      reports.inc({ kind: 'connection', outcome: 'refused' });
      throw reply(421, '4.7.0 Too many connections from your address, try again later');
    }
    perClient.set(client, open + 1);
    clientOfSession.set(session.id, client);
  }

  function onClose(session: SMTPServerSession): void {
    targets.delete(session.id);
    const client = clientOfSession.get(session.id);
    if (client === undefined) return;
    clientOfSession.delete(session.id);
    const open = (perClient.get(client) ?? 1) - 1;
    if (open > 0) perClient.set(client, open);
    else perClient.delete(client);
  }

  async function onRcptTo(address: SMTPServerAddress, session: SMTPServerSession): Promise<void> {
    if (postmaster.has(key(address.address))) {
      if (session.envelope.rcptTo.length >= MAX_RECIPIENTS) throw reply(452, '4.5.3 Too many recipients');
      return; // accepted; DATA finds no message for it and drops what it carries
    }
    const messageId = deps.links.messageOfReturnPath(address.address);
    if (!messageId) {
      reports.inc({ kind: 'refused_recipient', outcome: 'refused' });
      throw reply(550, '5.1.1 No such recipient here');
    }
    if (session.envelope.rcptTo.length >= MAX_RECIPIENTS) throw reply(452, '4.5.3 Too many recipients');
    let accountId: string | null;
    try {
      accountId = await messageAccountAllAccounts(deps.bounces.messages, messageId);
    } catch (err) {
      log.error({ err }, 'bounce listener: message lookup failed');
      throw reply(451, '4.3.0 Temporary failure, try again later');
    }
    if (!accountId) {
      reports.inc({ kind: 'refused_recipient', outcome: 'message_not_found' });
      throw reply(550, '5.1.1 No such recipient here');
    }
    const known = targets.get(session.id) ?? new Map<string, Target>();
    known.set(key(address.address), { accountId, messageId });
    targets.set(session.id, known);
  }

  async function onData(stream: SMTPServerDataStream, session: SMTPServerSession): Promise<void> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size <= MAX_REPORT_BYTES) chunks.push(chunk); // read on to the end, keep no more than the limit
    }
    const known = targets.get(session.id);
    const forMessages = new Map<string, Target>();
    let toPostmaster = false;
    for (const rcpt of session.envelope.rcptTo) {
      const target = known?.get(key(rcpt.address));
      if (target) forMessages.set(target.messageId, target); // two spellings of one return path: one report
      else toPostmaster ||= postmaster.has(key(rcpt.address));
    }
    if (stream.sizeExceeded || size > MAX_REPORT_BYTES) {
      reports.inc({ kind: 'too_large', outcome: 'refused' });
      throw reply(552, `5.3.4 Report larger than ${MAX_REPORT_BYTES} bytes`);
    }
    if (toPostmaster) reports.inc({ kind: 'postmaster', outcome: 'dropped' });
    if (forMessages.size === 0) return;
    const report = await parseBounceReport(Buffer.concat(chunks));
    const at = deps.bounces.now();
    try {
      for (const target of forMessages.values()) {
        const outcome = await apply(report, target, at);
        reports.inc({ kind: report.kind, outcome: outcome?.outcome ?? 'ignored' });
        log.info({ accountId: target.accountId, messageId: target.messageId, report: report.kind, outcome: outcome?.outcome ?? 'ignored', suppressed: outcome?.suppressed ?? null }, 'bounce report');
      }
    } catch (err) {
      reports.inc({ kind: report.kind, outcome: 'failed' });
      log.error({ err }, 'bounce listener: recording the report failed');
      throw reply(451, '4.3.0 Temporary failure, try again later');
    }
  }

  /** The report's effect on one message, or null when it has none (delay, unknown, success DSN in accept mode). */
  function apply(report: BounceReport, { accountId, messageId }: Target, at: Date): Promise<ReportOutcome> | null {
    switch (report.kind) {
      case 'bounce': {
        const failed = report.recipients.filter((r) => r.type !== null);
        const worst = failed.find((r) => r.type === 'HARD') ?? failed[0];
        return recordBounce(deps.bounces, { accountId, messageId, type: worst.type!, diagnosticCode: worst.diagnosticCode ?? worst.status, at });
      }
      case 'complaint':
        // RFC 6650's "not-spam": the reader marked it as wanted mail, the opposite of a complaint.
        return report.feedbackType === 'not-spam' ? null : recordComplaint(deps.bounces, { accountId, messageId, at });
      case 'delivered':
        return deps.deliveryConfirmation === 'dsn' ? recordDsnDelivery(deps.bounces, { accountId, messageId, at }) : null;
      case 'delayed':
      case 'unknown':
        return null;
    }
  }

  const server = new SMTPServer({
    name: 'mailer-bounces',
    banner: 'bounce reports only',
    // Reports arrive from relays and mailbox providers without credentials; nothing here relays.
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    size: MAX_REPORT_BYTES,
    disableReverseLookup: true,
    logger: false,
    closeTimeout: 5_000,
    // Reports arrive one at a time from a few relays; a flood of idle connections gets refused.
    maxClients: MAX_CLIENTS,
    socketTimeout: deps.limits.socketTimeoutMs,
    onConnect(session, callback) {
      try {
        onConnect(session);
        callback();
      } catch (err) {
        callback(err as Error);
      }
    },
    onRcptTo(address, session, callback) {
      onRcptTo(address, session).then(() => callback(), (err: Error) => callback(err));
    },
    onData(stream, session, callback) {
      onData(stream, session).then(() => callback(), (err: Error) => callback(err));
    },
    onClose,
  });
  server.on('error', (err) => log.warn({ err }, 'bounce listener: connection error'));

  const boundPort = await new Promise<number>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(port, host, () => {
      server.server.off('error', reject);
      resolve((server.server.address() as { port: number }).port);
    });
  });
  return {
    port: boundPort,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
