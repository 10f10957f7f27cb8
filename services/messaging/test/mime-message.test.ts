// The MIME message of a mail (domain/mime-message.ts) is byte for byte the message nodemailer's
// MailComposer makes of the same fields, boundary and date given: plain ASCII, accents and scripts in
// names, subjects and bodies, long lines, trailing whitespace, dots at line starts, bodies past the
// quoted-printable encoder's 64 KiB slices, one part or none; and every reader of a skeleton shares its
// boundary, unless a reader's own text holds it. SendPartsCache: one skeleton and DKIM key per send.
import { generateKeyPairSync } from 'node:crypto';
import nodemailer from 'nodemailer';
import { MailSkeleton, type MailSender, type ReaderMail } from '../src/mail/domain/mime-message';
import { SendPartsCache } from '../src/mail/domain/outgoing-mail';
import type { EmailMessageDoc } from '../src/mail/store/messages';

const BASE = '0123456789abcdef';
const DATE = new Date('2026-11-28T07:00:00.000Z');
const composer = nodemailer.createTransport({ streamTransport: true, buffer: true });

/** What nodemailer sends for the same mail (as outgoing-mail.ts asked it before; nodemailer dates it itself). */
async function byNodemailer(sender: MailSender, mail: ReaderMail): Promise<string> {
  const info = await composer.sendMail({
    from: { name: sender.fromName, address: sender.fromEmail },
    ...(sender.replyTo ? { replyTo: sender.replyTo } : {}),
    to: mail.to,
    subject: mail.subject,
    html: mail.html,
    text: mail.text,
    headers: { ...mail.headers },
    messageId: mail.messageId,
    baseBoundary: BASE,
    envelope: { from: 'bounce@b.example', to: [mail.to] },
  } as nodemailer.SendMailOptions);
  return (info.message as Buffer).toString('utf-8');
}

const sender: MailSender = { fromName: 'The Blog', fromEmail: 'blog@example.com', replyTo: 'help@example.com' };
const reader = (over: Partial<ReaderMail> = {}): ReaderMail => ({
  to: 'reader1@example.org',
  subject: 'Post 1 and more for Ann',
  messageId: '<0b7c6d1e-1@example.com>',
  date: DATE,
  headers: { 'List-Unsubscribe': '<https://mail.example.test/u/abc.def>', 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
  html: '<p class="hi">Hi Ann</p><a href="https://mail.example.test/u/abc.def">Unsubscribe</a>',
  text: 'Hi Ann\n\nUnsubscribe: https://mail.example.test/u/abc.def\n',
  ...over,
});

const longLine = `${'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(40)}end`;
const cases: Array<[string, MailSender, ReaderMail]> = [
  ['plain ASCII, short lines (7bit)', sender, reader()],
  ['long html lines (quoted-printable)', sender, reader({ html: `<div>${longLine}</div>` })],
  ['accents in name, subject and body', { fromName: 'Zoë & Søren, Café', fromEmail: 'news@example.com', replyTo: null }, reader({ subject: 'Ünïcödé: news for Jürgen', text: 'Grüße, Jürgen!\n', html: '<p>Grüße, Jürgen! «quoted» — dash</p>' })],
  ['mostly non-Latin (base64)', sender, reader({ subject: 'Привет, Анна: новости недели', text: 'Привет, Анна! Новости этой недели.\n'.repeat(5), html: '<p>Привет, Анна! 你好 🌍</p>'.repeat(8) })],
  ['trailing whitespace, tabs, dots and CRLF', sender, reader({ text: 'Line one   \n.dot line\r\n\tTabbed\t\n\nEnds with spaces   ', html: `<p>x</p>   \n.<b>y</b>\t  ` })],
  ['a long subject and an IDN address', sender, reader({ to: 'reader@bücher.example', subject: `A very long subject ${'that goes on and on '.repeat(6)}with ünïcode at the end` })],
  ['html past 64 KiB with whitespace at the slice border', sender, reader({ html: `${'<p>é</p>'.repeat(9000)}${' '.repeat(3)}${'a'.repeat(70_000)}${'x   y'.repeat(20_000)}   ` })],
  ['spaces right before the 64 KiB slice border', sender, reader({ html: `${'a'.repeat(65_533)}   b${'c'.repeat(65_530)}\t \n d` })],
  ['html only', sender, reader({ text: '' })],
  ['text only', sender, reader({ html: '', text: `Only text ${longLine}` })],
  ['no content, no subject', { ...sender, fromName: '' }, reader({ html: '', text: '', subject: '', headers: {} })],
];

describe('MailSkeleton.fill', () => {
  it.each(cases)('is what nodemailer composes: %s', async (_name, from, mail) => {
    const expected = await byNodemailer(from, mail);
    const date = new Date(/^Date: (.+)\r$/m.exec(expected)![1]);
    expect(new MailSkeleton(from, BASE).fill({ ...mail, date }).toString('utf-8')).toBe(expected);
  });

  it('gives every reader of a skeleton its boundary, each message its own values', () => {
    const skeleton = new MailSkeleton(sender);
    const ann = skeleton.fill(reader()).toString();
    const bob = skeleton.fill(reader({ to: 'bob@example.org', subject: 'For Bob', messageId: '<2@example.com>', html: '<p>Hi Bob</p>', text: 'Hi Bob\n' })).toString();
    for (const m of [ann, bob]) expect(m).toContain(`boundary="${skeleton.boundary}"`);
    expect(bob).toMatch(/^To: bob@example\.org\r$/m);
    expect(bob).toMatch(/^Message-ID: <2@example\.com>\r$/m);
    expect(bob).not.toContain('Ann');
    // another send: another boundary
    expect(new MailSkeleton(sender).boundary).not.toBe(skeleton.boundary);
  });

  it('gives a reader whose own text holds the boundary a boundary of their own', () => {
    const skeleton = new MailSkeleton(sender);
    const sly = skeleton.fill(reader({ text: `Hi\n--${skeleton.boundary}\nContent-Type: text/html\n\n<script>x</script>\n` })).toString();
    expect(sly).not.toContain(`boundary="${skeleton.boundary}"`);
    expect(sly).toMatch(/boundary="--_NmP-[0-9a-f]{16}-Part_1"/);
  });
});

describe('SendPartsCache', () => {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
  const dkim = { selector: 's1', privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
  const message = (over: Partial<EmailMessageDoc> = {}) => ({ accountId: 'acc-1', audienceKey: 'rss:issue-1', fromEmail: 'blog@example.com', fromName: 'The Blog', replyTo: null, ...over }) as EmailMessageDoc;

  it('builds the parts of an audience send once: every reader of the send gets the same skeleton and parsed key', () => {
    const cache = new SendPartsCache();
    const first = cache.for(message(), dkim);
    expect(cache.for(message(), dkim)).toBe(first);
    expect(first.dkim).toMatchObject({ domainName: 'example.com', keySelector: 's1' });
    expect(first.dkim!.privateKey.asymmetricKeyType).toBe('rsa');
    // another send, another account, another sender or key: parts of their own
    for (const other of [message({ audienceKey: 'rss:issue-2' }), message({ accountId: 'acc-2' }), message({ fromName: 'Renamed' })]) expect(cache.for(other, dkim)).not.toBe(first);
    expect(cache.for(message(), null)).not.toBe(first);
    expect(cache.for(message(), null).dkim).toBeNull();
  });

  it('gives a message of no audience send (transactional, automation, a test send) parts of its own', () => {
    const cache = new SendPartsCache();
    const single = message({ audienceKey: null });
    expect(cache.for(single, dkim)).not.toBe(cache.for(single, dkim));
  });
});
