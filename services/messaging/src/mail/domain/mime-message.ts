// The MIME message of one mail, in two steps so an audience send does the shared work once:
// - MailSkeleton: what every reader of a send shares (the encoded From and Reply-To lines, the
//   multipart boundary and its Content-Type line, the header encoder), built once per send;
// - fill(): one reader's message from it (To, Subject, Message-ID, Date, List-Unsubscribe, the
//   encoded text and html parts), one Buffer that goes to the relay as it is (nodemailer's `raw`).
// Built with nodemailer's own header encoding, folding and quoted-printable functions, in the order
// and layout its MailComposer gives a mail of these fields, so a reader gets the bytes nodemailer would
// have composed (test/mime-message.test.ts compares them); only the boundary is per send, not per mail.
// Before, every mail went through MailComposer and MimeNode's stream tree: a dozen transform streams
// and as many socket writes per mail for a message that is a few kilobytes.
import { randomBytes } from 'node:crypto';
import MimeNode from 'nodemailer/lib/mime-node';
import * as mimeFuncs from 'nodemailer/lib/mime-funcs';
import * as qp from 'nodemailer/lib/qp';

export interface MailSender {
  fromName: string;
  fromEmail: string;
  replyTo: string | null;
}

/** What differs from reader to reader. */
export interface ReaderMail {
  to: string;
  subject: string;
  messageId: string;
  date: Date;
  /** Extra headers (List-Unsubscribe, List-Unsubscribe-Post), first in the header as nodemailer puts them. */
  headers: Record<string, string>;
  html: string;
  text: string;
}

/** MimeNode members used here that its type declaration keeps private. */
interface HeaderEncoder {
  encodeHeaderValue(key: string, value: unknown): string;
  _normalizeHeaderKey(key: string): string;
  _getTextEncoding(value: string): 'Q' | 'B';
}

const LINE = 76;
// nodemailer's quoted-printable encoder works in slices of 64 KiB (qp/index.js ENCODE_SLICE_SIZE)
const QP_SLICE = 64 * 1024;
const isWhitespace = (c: number | undefined) => c === 0x20 || c === 0x09;

/** A header line as MimeNode.buildHeaders writes it: the value encoded, the line folded at 76. */
function headerLine(encoder: HeaderEncoder, key: string, value: unknown): string | null {
  const encoded = encoder.encodeHeaderValue(key, value);
  return encoded.trim() ? mimeFuncs.foldLines(`${key}: ${encoded}`, LINE) : null;
}

/** One slice of quoted-printable as nodemailer's Encoder encodes it, `next` being the byte after it. */
function encodeSlice(slice: Buffer, next: number | undefined): string {
  // Whitespace followed by more text stays literal; qp.encode sees the slice's end as the input's end.
  if (next === undefined || next === 0x0a || next === 0x0d) return qp.encode(slice);
  let end = slice.length;
  while (end > 0 && isWhitespace(slice[end - 1])) end--;
  return qp.encode(slice.subarray(0, end)) + slice.toString('latin1', end);
}

/** The quoted-printable text nodemailer's Encoder stream gives for `content` written at once. */
function quotedPrintable(content: string): string {
  let buf = Buffer.from(content, 'utf-8');
  let end = buf.length;
  while (end > 0 && isWhitespace(buf[end - 1])) end--;
  let rest: Buffer | null = null;
  if (buf.length - end <= QP_SLICE) {
    rest = end < buf.length ? buf.subarray(end) : null;
    buf = buf.subarray(0, end);
  }
  let out = '';
  let line = '';
  const slices = (b: Buffer) => {
    for (let start = 0; start < b.length; start += QP_SLICE) {
      const stop = Math.min(start + QP_SLICE, b.length);
      const wrapped = qp.wrap(line + encodeSlice(b.subarray(start, stop), stop < b.length ? b[stop] : undefined), LINE);
      const lf = wrapped.lastIndexOf('\n');
      line = wrapped.substring(lf + 1);
      out += wrapped.substring(0, lf + 1);
    }
  };
  slices(buf);
  if (rest) slices(rest);
  return out + line;
}

function base64(content: string): string {
  const b64 = Buffer.from(content, 'utf-8').toString('base64');
  const lines: string[] = [];
  for (let i = 0; i < b64.length; i += LINE) lines.push(b64.slice(i, i + LINE));
  return lines.join('\r\n');
}

/** A text part's transfer encoding and encoded body, chosen as MimeNode.getTransferEncoding does. */
function encodedPart(encoder: HeaderEncoder, content: string): { encoding: string | null; body: string } {
  if (!content) return { encoding: null, body: '' };
  if (mimeFuncs.isPlainText(content) && !mimeFuncs.hasLongerLines(content, LINE)) return { encoding: '7bit', body: content };
  return encoder._getTextEncoding(content) === 'Q' ? { encoding: 'quoted-printable', body: quotedPrintable(content) } : { encoding: 'base64', body: base64(content) };
}

/** The parts every reader of a send shares, encoded once; fill() makes one reader's message. */
export class MailSkeleton {
  /** The multipart boundary of every message filled from this skeleton. */
  readonly boundary: string;
  private readonly encoder = new MimeNode(false) as unknown as HeaderEncoder;
  private readonly from: string;
  private readonly replyTo: string | null;
  private readonly multipartType: string;

  constructor(
    private readonly sender: MailSender,
    baseBoundary = randomBytes(8).toString('hex'),
  ) {
    // MimeNode's boundary of a message's root node (its first node)
    this.boundary = `--_NmP-${baseBoundary}-Part_1`;
    this.from = headerLine(this.encoder, 'From', { name: sender.fromName, address: sender.fromEmail })!;
    this.replyTo = sender.replyTo ? headerLine(this.encoder, 'Reply-To', sender.replyTo) : null;
    this.multipartType = mimeFuncs.foldLines(`Content-Type: ${mimeFuncs.buildHeaderValue({ value: 'multipart/alternative', params: { boundary: this.boundary } })}`, LINE);
  }

  /** One reader's message, as the relay gets it. */
  fill(mail: ReaderMail): Buffer {
    // A reader's own text could hold the send's boundary (it is on every mail of the send): that
    // mail gets a boundary of its own.
    if (mail.text.includes(this.boundary) || mail.html.includes(this.boundary)) return new MailSkeleton(this.sender).fill(mail);
    const head: string[] = [];
    for (const [key, value] of Object.entries(mail.headers)) {
      const line = headerLine(this.encoder, this.encoder._normalizeHeaderKey(key), value);
      if (line) head.push(line);
    }
    head.push(this.from);
    const add = (key: string, value: string) => {
      const line = value ? headerLine(this.encoder, key, value) : null;
      if (line) head.push(line);
    };
    add('To', mail.to);
    if (this.replyTo) head.push(this.replyTo);
    add('Subject', mail.subject);
    add('Message-ID', mail.messageId);
    const text = encodedPart(this.encoder, mail.text);
    const html = encodedPart(this.encoder, mail.html);
    const tail = [`Date: ${mail.date.toUTCString().replace(/GMT/, '+0000')}`, 'MIME-Version: 1.0'];
    if (mail.text && mail.html) {
      head.push(...tail, this.multipartType);
      const part = (type: string, p: { encoding: string | null; body: string }) =>
        `Content-Type: ${type}; charset=utf-8\r\n${p.encoding ? `Content-Transfer-Encoding: ${p.encoding}\r\n` : ''}\r\n${p.body}`;
      return Buffer.from(`${head.join('\r\n')}\r\n\r\n--${this.boundary}\r\n${part('text/plain', text)}\r\n--${this.boundary}\r\n${part('text/html', html)}\r\n--${this.boundary}--\r\n`, 'utf-8');
    }
    // One part (or none): the message is that part, its headers the root's.
    const [type, only] = mail.html ? ['text/html; charset=utf-8', html] : mail.text ? ['text/plain; charset=utf-8', text] : ['text/plain', text];
    if (only.encoding) head.push(`Content-Transfer-Encoding: ${only.encoding}`);
    head.push(...tail, `Content-Type: ${type}`);
    const message = `${head.join('\r\n')}\r\n\r\n${only.body}`;
    // nodemailer ends every message with a line break
    return Buffer.from(message.endsWith('\n') ? message : message.endsWith('\r') ? `${message}\n` : `${message}\r\n`, 'utf-8');
  }
}
