// Form bodies of reader pages (a service's public HTML forms): RFC 8058 one-click posts
// (`List-Unsubscribe=One-Click`) come as application/x-www-form-urlencoded or multipart/form-data,
// plain HTML forms (preference page, signup forms) as the former.
// Small and bounded: a body over the limit is refused before it is read whole (413).
import type { IncomingMessage } from 'node:http';
import busboy from 'busboy';

/** Field name -> every value it was sent with, in order. */
export type FormFields = Map<string, string[]>;

export class FormBodyError extends Error {
  constructor(
    readonly status: 400 | 413 | 415,
    message: string,
  ) {
    super(message);
    this.name = 'FormBodyError';
  }
}

export const FORM_BODY_LIMIT_BYTES = 16 * 1024;

export async function readFormBody(req: IncomingMessage, limitBytes = FORM_BODY_LIMIT_BYTES): Promise<FormFields> {
  const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limitBytes) throw new FormBodyError(413, 'body too large');
  if (type === 'application/x-www-form-urlencoded') return urlEncoded(await readAll(req, limitBytes));
  if (type === 'multipart/form-data') return multipart(req, limitBytes);
  throw new FormBodyError(415, 'expected application/x-www-form-urlencoded or multipart/form-data');
}

function add(fields: FormFields, name: string, value: string): void {
  const values = fields.get(name);
  if (values) values.push(value);
  else fields.set(name, [value]);
}

function urlEncoded(body: Buffer): FormFields {
  const fields: FormFields = new Map();
  for (const [name, value] of new URLSearchParams(body.toString('utf8'))) add(fields, name, value);
  return fields;
}

function readAll(req: IncomingMessage, limitBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limitBytes) {
        req.pause();
        reject(new FormBodyError(413, 'body too large'));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function multipart(req: IncomingMessage, limitBytes: number): Promise<FormFields> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, limits: { fieldSize: limitBytes, fields: 200, files: 0, parts: 200 } });
    } catch {
      reject(new FormBodyError(400, 'malformed multipart body'));
      return;
    }
    const fields: FormFields = new Map();
    let size = 0;
    let failed = false;
    const fail = (err: FormBodyError) => {
      if (failed) return;
      failed = true;
      req.unpipe(parser);
      req.pause();
      reject(err);
    };
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limitBytes) fail(new FormBodyError(413, 'body too large'));
    });
    parser.on('field', (name, value) => add(fields, name, value));
    // A file part is no form field of ours: skipped unread (files: 0 stops busboy from buffering one).
    parser.on('file', (_name, stream) => stream.resume());
    parser.on('error', () => fail(new FormBodyError(400, 'malformed multipart body')));
    parser.on('close', () => {
      if (!failed) resolve(fields);
    });
    req.pipe(parser);
  });
}
