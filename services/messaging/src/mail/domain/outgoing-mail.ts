// The mail of a stored message as it goes to the relay: From "fromName <fromEmail>", Reply-To, To,
// Subject, the rendered html and text, the body's extra headers (List-Unsubscribe for marketing mail),
// a Message-ID that is the same on every attempt (a resend after a crash is then recognisably the same
// mail), the VERP return path as envelope sender, and a DKIM signature when the caller found a key for
// the sending account and domain (app/sending-domains.ts dkimKeyFor).
// The MIME message is filled from the skeleton of its send (domain/mime-message.ts): the readers of
// one audience send (an RSS issue, a broadcast) share one, built with the send's first mail; any
// other message gets one of its own.
import { createPrivateKey, type KeyObject } from 'node:crypto';
import { Lru } from '@mailer/kit';
import type { SendMailOptions } from 'nodemailer';
import type { EmailBodyDoc, EmailMessageDoc } from '../store/messages';
import { MailSkeleton } from './mime-message';

export interface DkimKey {
  selector: string;
  privateKey: string;
}

export const domainOf = (address: string): string => address.slice(address.lastIndexOf('@') + 1).toLowerCase();

/** `<messageId@sender domain>`: stable per message. */
export const messageIdHeader = (message: Pick<EmailMessageDoc, '_id' | 'fromEmail'>): string => `<${message._id}@${domainOf(message.fromEmail)}>`;

/** What the readers of a send share: the MIME skeleton and the DKIM signer's options (its key parsed once). */
export interface SendParts {
  skeleton: MailSkeleton;
  dkim: { domainName: string; keySelector: string; privateKey: KeyObject } | null;
}

type Sender = Pick<EmailMessageDoc, 'fromEmail' | 'fromName' | 'replyTo'>;

function sendParts(message: Sender, dkim: DkimKey | null): SendParts {
  return {
    skeleton: new MailSkeleton({ fromName: message.fromName, fromEmail: message.fromEmail, replyTo: message.replyTo ?? null }),
    dkim: dkim ? { domainName: domainOf(message.fromEmail), keySelector: dkim.selector, privateKey: createPrivateKey(dkim.privateKey) } : null,
  };
}

/**
 * The shared parts of the audience sends being delivered, by send: built once per send (and again
 * only if it drops out of the cache, or its sender or key changed meanwhile).
 */
export class SendPartsCache {
  private readonly sends = new Lru<string, SendParts>(1_000);

  /** The parts of the message's send; a message of no audience send gets parts of its own. */
  for(message: Pick<EmailMessageDoc, 'accountId' | 'audienceKey'> & Sender, dkim: DkimKey | null): SendParts {
    if (!message.audienceKey) return sendParts(message, dkim);
    const key = [message.accountId, message.audienceKey, message.fromEmail, message.fromName, message.replyTo ?? '', dkim?.selector ?? '', dkim?.privateKey ?? ''].join('\0');
    let parts = this.sends.get(key);
    if (!parts) this.sends.set(key, (parts = sendParts(message, dkim)));
    return parts;
  }
}

export function outgoingMail(
  message: EmailMessageDoc,
  body: Pick<EmailBodyDoc, 'html' | 'text' | 'headers'>,
  opts: { returnPath: string; parts: SendParts; now: Date },
): SendMailOptions {
  const { skeleton, dkim } = opts.parts;
  const messageId = messageIdHeader(message);
  const raw = skeleton.fill({
    to: message.email,
    subject: message.subject,
    messageId,
    date: opts.now,
    headers: body.headers ?? {},
    html: body.html,
    text: body.text,
  });
  return {
    raw,
    // not written (the raw message has it), but spares nodemailer generating a random one per mail
    messageId,
    envelope: { from: opts.returnPath, to: [message.email] },
    // nodemailer's DKIM signer takes the key as node:crypto accepts it: a KeyObject is not parsed again per mail
    ...(dkim ? { dkim: dkim as unknown as NonNullable<SendMailOptions['dkim']> } : {}),
  };
}
