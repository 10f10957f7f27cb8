// A real SMTP relay for tests (smtp-server on a free loopback port) that captures every message it
// is given and answers each recipient as the test says: 250 (accept), 451 (try again later), 550
// (reject) or 'drop' (close the connection without an answer). A list of answers is used one per
// attempt (the last one repeats), so "451 then 250" is one call. Answers are given at RCPT TO, where
// a real relay refuses a recipient; an optional delay before answering DATA makes a slow relay.
import { SMTPServer, type SMTPServerSession } from 'smtp-server';
import { simpleParser, type ParsedMail } from 'mailparser';
import { freePort } from './nats';

export type RelayAnswer = 250 | 451 | 550 | 'drop';

export interface CapturedMail {
  /** Envelope sender (MAIL FROM), e.g. the VERP return path. */
  mailFrom: string;
  /** Envelope recipients (RCPT TO) the relay accepted. */
  rcptTo: string[];
  /** The message exactly as received (headers + body). */
  raw: string;
  /** Header values by lower-case name (the first occurrence, unfolded), as they were on the wire. */
  headers: Record<string, string>;
  subject: string | null;
  messageId: string | null;
  html: string | null;
  text: string | null;
  /** The full mailparser result (addresses, attachments...). */
  parsed: ParsedMail;
  receivedAt: Date;
}

export interface CaptureRelayOptions {
  /** Answer for recipients without their own (default 250). */
  defaultAnswer?: RelayAnswer;
  /** Wait this long before answering DATA (default 0). */
  dataDelayMs?: number;
}

export interface CaptureRelay {
  readonly port: number;
  /** `smtp://127.0.0.1:<port>`, for SMTP_URL. */
  readonly url: string;
  /** Every message received in full, oldest first (recorded when its data has arrived, before the answer to DATA). */
  readonly messages: CapturedMail[];
  /** How the relay answers RCPT TO for this address: one answer for every attempt, or one per attempt (the last repeats). */
  answer(recipient: string, answers: RelayAnswer | RelayAnswer[]): void;
  /** Changes the delay before the answer to DATA. */
  setDataDelay(ms: number): void;
  /** Messages received for this recipient. */
  receivedFor(recipient: string): CapturedMail[];
  /** RCPT TO commands seen for this recipient (every attempt, whatever the answer). */
  attemptsFor(recipient: string): number;
  /** Resolves with the messages once `predicate` holds (checked on every message), or rejects after timeoutMs. */
  waitFor(predicate: (messages: CapturedMail[]) => boolean, timeoutMs?: number): Promise<CapturedMail[]>;
  /** Forgets the messages, attempts and answers. */
  clear(): void;
  close(): Promise<void>;
}

const key = (address: string) => address.trim().toLowerCase();

function headerRecord(parsed: ParsedMail): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const { key: name, line } of parsed.headerLines) {
    if (name in headers) continue;
    headers[name] = line.slice(line.indexOf(':') + 1).replace(/\r?\n[ \t]+/g, ' ').trim();
  }
  return headers;
}

export async function startCaptureRelay(options: CaptureRelayOptions = {}): Promise<CaptureRelay> {
  const port = await freePort();
  const messages: CapturedMail[] = [];
  const answers = new Map<string, RelayAnswer[]>();
  const attempts = new Map<string, number>();
  let dataDelayMs = options.dataDelayMs ?? 0;
  const waiters = new Set<() => void>();

  const answerFor = (recipient: string): RelayAnswer => {
    const n = attempts.get(recipient) ?? 0;
    attempts.set(recipient, n + 1);
    const list = answers.get(recipient);
    if (!list) return options.defaultAnswer ?? 250;
    return list[Math.min(n, list.length - 1)];
  };

  const server: SMTPServer = new SMTPServer({
    logger: false,
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    // Many pooled connections from a bench or a crash test.
    maxClients: 1_000,
    onRcptTo(address, session: SMTPServerSession, callback) {
      const answer = answerFor(key(address.address));
      if (answer === 250) return callback();
      if (answer === 'drop') {
        for (const connection of server.connections) if (connection.session.id === session.id) connection._socket.destroy();
        return;
      }
      const err = new Error(answer === 451 ? '4.2.0 Mailbox busy, try again later' : '5.1.1 No such user here') as Error & { responseCode: number };
      err.responseCode = answer;
      callback(err);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('error', callback);
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const envelope = session.envelope;
        simpleParser(raw)
          .then((parsed) => {
            messages.push({
              mailFrom: envelope.mailFrom ? envelope.mailFrom.address : '',
              rcptTo: envelope.rcptTo.map((r) => r.address),
              raw,
              headers: headerRecord(parsed),
              subject: parsed.subject ?? null,
              messageId: parsed.messageId ?? null,
              html: typeof parsed.html === 'string' ? parsed.html : null,
              text: parsed.text ?? null,
              parsed,
              receivedAt: new Date(),
            });
            for (const wake of [...waiters]) wake();
            setTimeout(() => callback(null, 'Ok: queued'), dataDelayMs);
          })
          .catch((err: Error) => callback(err));
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  // A client that vanishes mid-session is normal here (crash tests); never let it throw.
  server.on('error', () => undefined);

  return {
    port,
    url: `smtp://127.0.0.1:${port}`,
    messages,
    answer(recipient, list) {
      answers.set(key(recipient), Array.isArray(list) ? list : [list]);
    },
    setDataDelay(ms) {
      dataDelayMs = ms;
    },
    receivedFor: (recipient) => messages.filter((m) => m.rcptTo.some((r) => key(r) === key(recipient))),
    attemptsFor: (recipient) => attempts.get(key(recipient)) ?? 0,
    waitFor(predicate, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!predicate(messages)) return;
          cleanup();
          resolve(messages);
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`capture relay: condition not met within ${timeoutMs} ms (${messages.length} messages received)`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    clear() {
      messages.length = 0;
      attempts.clear();
      answers.clear();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const connection of server.connections) connection._socket.destroy();
        server.close(() => resolve());
      }),
  };
}
