// The one pooled SMTP transport of the process (nodemailer) to SMTP_URL: SMTP_POOL_SIZE connections
// reused for every message. Timeouts are bounded so a silent relay cannot hold a send (and its
// claim on the message, see domain/delivery.ts STALE_CLAIM_MS) for long.
import nodemailer, { type SendMailOptions } from 'nodemailer';

export interface MailTransport {
  /** Sends one message; resolves with the relay's final answer, rejects with nodemailer's error. */
  send(mail: SendMailOptions): Promise<{ response: string }>;
  close(): void;
}

export function smtpTransport(settings: { SMTP_URL: string; SMTP_POOL_SIZE: number }): MailTransport {
  const transport = nodemailer.createTransport({
    url: settings.SMTP_URL,
    pool: true,
    maxConnections: settings.SMTP_POOL_SIZE,
    // Reconnecting after every 100 messages (nodemailer's default) costs a handshake for nothing.
    maxMessages: Infinity,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 60_000,
    // Rendered mail never names files or URLs to attach: refuse to read them.
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  return {
    async send(mail) {
      const info = await transport.sendMail(mail);
      return { response: String(info.response ?? '') };
    },
    close: () => transport.close(),
  };
}
