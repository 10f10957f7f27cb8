// The mail of a stored message as it goes to the relay (pure): From "fromName <fromEmail>",
// Reply-To, To, Subject, the rendered html and text, the body's extra headers (List-Unsubscribe for
// marketing mail), a Message-ID that is the same on every attempt (a resend after a crash is then
// recognisably the same mail), the VERP return path as envelope sender, and a DKIM signature when the
// caller found a key for the sending account and domain (app/sending-domains.ts dkimKeyFor).
import type { SendMailOptions } from 'nodemailer';
import type { EmailBodyDoc, EmailMessageDoc } from '../store/messages';

export interface DkimKey {
  selector: string;
  privateKey: string;
}

export const domainOf = (address: string): string => address.slice(address.lastIndexOf('@') + 1).toLowerCase();

/** `<messageId@sender domain>`: stable per message. */
export const messageIdHeader = (message: Pick<EmailMessageDoc, '_id' | 'fromEmail'>): string => `<${message._id}@${domainOf(message.fromEmail)}>`;

export function outgoingMail(
  message: EmailMessageDoc,
  body: Pick<EmailBodyDoc, 'html' | 'text' | 'headers'>,
  opts: { returnPath: string; dkim: DkimKey | null },
): SendMailOptions {
  const domain = domainOf(message.fromEmail);
  const { dkim } = opts;
  return {
    from: { name: message.fromName, address: message.fromEmail },
    ...(message.replyTo ? { replyTo: message.replyTo } : {}),
    to: message.email,
    subject: message.subject,
    html: body.html,
    text: body.text,
    headers: { ...(body.headers ?? {}) },
    messageId: messageIdHeader(message),
    envelope: { from: opts.returnPath, to: [message.email] },
    ...(dkim ? { dkim: { domainName: domain, keySelector: dkim.selector, privateKey: dkim.privateKey } } : {}),
  };
}
