// Parses inbound reports sent to our VERP addresses: delivery status notifications (RFC 3464)
// and abuse feedback reports (ARF, RFC 5965). Never throws: anything it cannot read is 'unknown'.
//
// mailparser (simpleParser) reads the top-level headers (report-type, boundary). It cannot be used
// for the parts: it merges message/delivery-status into the text body and inlines message/rfc822,
// so the report's top-level parts are split here by their boundary and their header blocks parsed
// here (RFC 822 style: folded lines, blocks separated by blank lines).
import { simpleParser } from 'mailparser';

interface Part {
  contentType: string;
  content: Buffer;
}

/** Reports larger than this are refused unread (real DSN/ARF reports are a few KiB). */
export const MAX_REPORT_BYTES = 1024 * 1024;

export type BounceType = 'HARD' | 'SOFT';

export interface RecipientStatus {
  finalRecipient: string;
  action: string; // failed | delayed | delivered | relayed | expanded (lower case)
  status: string | null; // e.g. 5.1.1
  /** HARD for 5.x.x failures, SOFT for 4.x.x failures, null when not a final failure (delayed, delivered). */
  type: BounceType | null;
  diagnosticCode: string | null;
}

interface DsnCommon {
  originalEnvelopeId: string | null;
  recipients: RecipientStatus[];
}

export type BounceReport =
  | ({ kind: 'bounce' } & DsnCommon) // at least one recipient failed
  | ({ kind: 'delayed' } & DsnCommon) // only delays: no final outcome yet
  | ({ kind: 'delivered' } & DsnCommon) // success DSN (delivered/relayed/expanded)
  | {
      kind: 'complaint';
      feedbackType: string;
      originalRecipient: string | null;
      originalMailFrom: string | null;
      originalMessageId: string | null;
    }
  | { kind: 'unknown'; reason: string };

export type HeaderBlock = Map<string, string>;

/** Parses RFC 822-style header blocks separated by blank lines; first occurrence of a field wins. */
export function parseHeaderBlocks(text: string): HeaderBlock[] {
  const blocks: HeaderBlock[] = [];
  for (const raw of text.replace(/\r\n?/g, '\n').split(/\n[ \t]*\n/)) {
    const block: HeaderBlock = new Map();
    const unfolded = raw.replace(/\n[ \t]+/g, ' ');
    for (const line of unfolded.split('\n')) {
      const colon = line.indexOf(':');
      if (colon <= 0) continue;
      const name = line.slice(0, colon).trim().toLowerCase();
      if (!/^[\x21-\x39\x3b-\x7e]+$/.test(name)) continue;
      if (!block.has(name)) block.set(name, line.slice(colon + 1).trim());
    }
    if (block.size > 0) blocks.push(block);
  }
  return blocks;
}

/** "rfc822; a@b" -> "a@b" (lower case; address type prefix and angle brackets removed). */
function address(value: string | undefined): string | null {
  if (!value) return null;
  const semi = value.indexOf(';');
  const addr = (semi >= 0 ? value.slice(semi + 1) : value).trim().replace(/^<(.*)>$/, '$1').trim();
  return addr ? addr.toLowerCase() : null;
}

function statusCode(value: string | undefined): string | null {
  const m = value ? /([245])\.(\d{1,3})\.(\d{1,3})/.exec(value) : null;
  return m ? `${m[1]}.${m[2]}.${m[3]}` : null;
}

function recipientType(action: string, status: string | null): BounceType | null {
  if (action !== 'failed') return null;
  // A failure without a readable status is permanent by RFC 3464's definition of "failed".
  return status?.startsWith('4.') ? 'SOFT' : 'HARD';
}

function findPart(parts: Part[], types: string[]): Part | undefined {
  return parts.find((a) => types.includes(a.contentType));
}

/** The top-level parts of a multipart body: content type (lower case) and decoded body. */
function splitParts(raw: string, boundary: string): Part[] {
  const text = raw.replace(/\r\n?/g, '\n');
  const delimiter = `\n--${boundary}`;
  const chunks = `\n${text}`.split(delimiter).slice(1);
  const parts: Part[] = [];
  for (const chunk of chunks) {
    if (chunk.startsWith('--')) break; // close delimiter
    const body = chunk.replace(/^[ \t]*\n/, '');
    const end = body.search(/\n[ \t]*\n|^[ \t]*\n/);
    const head = end >= 0 ? body.slice(0, end) : body;
    const content = end >= 0 ? body.slice(end).replace(/^\n?[ \t]*\n/, '') : '';
    const [headers] = parseHeaderBlocks(head);
    const contentType = (headers?.get('content-type') ?? 'text/plain').split(';')[0].trim().toLowerCase();
    const encoding = (headers?.get('content-transfer-encoding') ?? '').toLowerCase();
    parts.push({
      contentType,
      content: encoding === 'base64' ? Buffer.from(content, 'base64') : Buffer.from(content, 'utf8'),
    });
  }
  return parts;
}

function dsn(part: Part): BounceReport {
  const [perMessage, ...perRecipient] = parseHeaderBlocks(part.content.toString('utf8'));
  if (!perMessage) return { kind: 'unknown', reason: 'empty delivery-status' };
  const recipients: RecipientStatus[] = [];
  for (const block of perRecipient) {
    const finalRecipient = address(block.get('final-recipient') ?? block.get('original-recipient'));
    const action = (block.get('action') ?? '').toLowerCase().split(/[\s(]/)[0];
    if (!finalRecipient || !action) continue;
    const status = statusCode(block.get('status'));
    recipients.push({
      finalRecipient,
      action,
      status,
      type: recipientType(action, status),
      diagnosticCode: block.get('diagnostic-code') ?? null,
    });
  }
  if (recipients.length === 0) return { kind: 'unknown', reason: 'no recipient status' };
  const common = { originalEnvelopeId: perMessage.get('original-envelope-id') ?? null, recipients };
  if (recipients.some((r) => r.action === 'failed')) return { kind: 'bounce', ...common };
  if (recipients.some((r) => r.action === 'delayed')) return { kind: 'delayed', ...common };
  return { kind: 'delivered', ...common };
}

function originalMessageId(attachments: Part[]): string | null {
  const part = findPart(attachments, ['message/rfc822', 'text/rfc822-headers', 'message/rfc822-headers']);
  if (!part) return null;
  const text = part.content.toString('utf8');
  const headerEnd = text.search(/\r?\n\r?\n/);
  const [headers] = parseHeaderBlocks(headerEnd >= 0 ? text.slice(0, headerEnd) : text);
  return headers?.get('message-id') ?? null;
}

function arf(part: Part, attachments: Part[]): BounceReport {
  const [fields] = parseHeaderBlocks(part.content.toString('utf8'));
  const feedbackType = fields?.get('feedback-type')?.toLowerCase();
  if (!fields || !feedbackType) return { kind: 'unknown', reason: 'no feedback type' };
  return {
    kind: 'complaint',
    feedbackType,
    originalRecipient: address(fields.get('original-rcpt-to')),
    originalMailFrom: address(fields.get('original-mail-from')),
    originalMessageId: originalMessageId(attachments),
  };
}

export async function parseBounceReport(raw: Buffer | string): Promise<BounceReport> {
  try {
    const size = typeof raw === 'string' ? Buffer.byteLength(raw) : raw.length;
    if (size > MAX_REPORT_BYTES) return { kind: 'unknown', reason: 'too large' };
    const mail = await simpleParser(raw, { skipHtmlToText: true, skipTextToHtml: true, skipTextLinks: true });
    const ct = mail.headers.get('content-type') as { value?: string; params?: Record<string, string> } | undefined;
    if ((ct?.value ?? '').toLowerCase() !== 'multipart/report') return { kind: 'unknown', reason: 'not a report' };
    const reportType = (ct?.params?.['report-type'] ?? '').toLowerCase();
    const boundary = ct?.params?.boundary;
    if (!boundary) return { kind: 'unknown', reason: 'no boundary' };
    const attachments = splitParts(typeof raw === 'string' ? raw : raw.toString('latin1'), boundary);
    if (reportType === 'delivery-status') {
      const part = findPart(attachments, ['message/delivery-status', 'message/global-delivery-status']);
      return part ? dsn(part) : { kind: 'unknown', reason: 'no delivery-status part' };
    }
    if (reportType === 'feedback-report') {
      const part = findPart(attachments, ['message/feedback-report']);
      return part ? arf(part, attachments) : { kind: 'unknown', reason: 'no feedback-report part' };
    }
    return { kind: 'unknown', reason: 'unsupported report type' };
  } catch {
    return { kind: 'unknown', reason: 'unreadable' };
  }
}
