import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MAX_REPORT_BYTES, parseBounceReport, parseHeaderBlocks } from '../src/readers/domain/bounce-report';

const fixture = (name: string) => readFileSync(join(__dirname, 'fixtures', name));

describe('parseBounceReport: DSN (RFC 3464)', () => {
  it('reads the RFC 3464 simple example: failed with 4.0.0 is a soft bounce', async () => {
    const r = await parseBounceReport(fixture('rfc3464-simple.eml'));
    expect(r).toEqual({
      kind: 'bounce',
      originalEnvelopeId: null,
      recipients: [
        {
          finalRecipient: 'louisl@larry.slip.umd.edu',
          action: 'failed',
          status: '4.0.0',
          type: 'SOFT',
          diagnosticCode: 'smtp; 426 connection timed out',
        },
      ],
    });
  });

  it('reads several recipients with mixed outcomes, folded fields and the envelope id', async () => {
    const r = await parseBounceReport(fixture('rfc3464-multi.eml'));
    expect(r.kind).toBe('bounce');
    if (r.kind !== 'bounce') return;
    expect(r.originalEnvelopeId).toBe('665f1c2ab3e4d5f6a7b8c9d0');
    expect(r.recipients.map((x) => [x.finalRecipient, x.action, x.status, x.type])).toEqual([
      ['arathib@vnet.ibm.com', 'failed', '5.0.0', 'HARD'],
      ['johnh@hpnjld.njd.hp.com', 'delayed', '4.0.0', null],
      ['wsnell@sdcc13.ucsd.edu', 'failed', '5.0.0', 'HARD'],
      ['ok@example.org', 'delivered', '2.0.0', null],
    ]);
    expect(r.recipients[0].diagnosticCode).toBe("smtp; 550 'arathib@vnet.IBM.COM' is not a registered gateway user");
  });

  it('reads a Postfix bounce as a hard bounce', async () => {
    const r = await parseBounceReport(fixture('postfix-hard.eml'));
    expect(r.kind).toBe('bounce');
    if (r.kind !== 'bounce') return;
    expect(r.recipients).toHaveLength(1);
    expect(r.recipients[0]).toMatchObject({ finalRecipient: 'nobody@example.org', status: '5.1.1', type: 'HARD' });
    expect(r.recipients[0].diagnosticCode).toContain('Recipient address rejected: User unknown');
  });

  it('reads a delay warning as delayed, neither hard nor soft', async () => {
    const r = await parseBounceReport(fixture('rfc3464-delayed.eml'));
    expect(r.kind).toBe('delayed');
    if (r.kind !== 'delayed') return;
    expect(r.recipients).toEqual([
      expect.objectContaining({ finalRecipient: 'jtnerd@prodigy.com', action: 'delayed', status: '4.4.1', type: null }),
    ]);
  });

  it('reads a success DSN as delivered', async () => {
    const r = await parseBounceReport(fixture('delivered.eml'));
    expect(r).toMatchObject({
      kind: 'delivered',
      originalEnvelopeId: '665f1c2ab3e4d5f6a7b8c9d0',
      recipients: [{ finalRecipient: 'reader@example.net', action: 'delivered', status: '2.0.0', type: null }],
    });
  });
});

describe('parseBounceReport: ARF (RFC 5965)', () => {
  it('reads the RFC 5965 example complaint with the original Message-ID', async () => {
    const r = await parseBounceReport(fixture('arf-rfc5965.eml'));
    expect(r).toEqual({
      kind: 'complaint',
      feedbackType: 'abuse',
      originalRecipient: 'user@example.com',
      originalMailFrom: 'b-665f1c2ab3e4d5f6a7b8c9d0-0123456789abcdef0123@bounces.localhost',
      originalMessageId: '<8787KJKJ3K4J3K4J3K4J3.mail@example.net>',
    });
  });
});

describe('parseBounceReport: anything else is unknown, never an exception', () => {
  const cases: Array<[string, string | Buffer]> = [
    ['empty', ''],
    ['binary garbage', Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256))],
    ['plain mail', 'From: a@b\r\nTo: c@d\r\nSubject: hi\r\n\r\nhello\r\n'],
    ['report without parts', 'Content-Type: multipart/report; report-type=delivery-status; boundary=x\r\n\r\n--x--\r\n'],
    [
      'delivery-status without recipients',
      'Content-Type: multipart/report; report-type=delivery-status; boundary=x\r\n\r\n--x\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; a\r\n\r\n--x--\r\n',
    ],
    [
      'other report type',
      'Content-Type: multipart/report; report-type=disposition-notification; boundary=x\r\n\r\n--x\r\nContent-Type: text/plain\r\n\r\nread\r\n--x--\r\n',
    ],
    ['unterminated header soup', 'Content-Type: multipart/report; report-type=feedback-report; boundary="' + ':'.repeat(5000)],
  ];
  it.each(cases)('%s', async (_name, raw) => {
    await expect(parseBounceReport(raw)).resolves.toMatchObject({ kind: 'unknown' });
  });

  it('refuses reports over the size limit unread', async () => {
    const big = Buffer.concat([fixture('postfix-hard.eml'), Buffer.alloc(MAX_REPORT_BYTES, 'a')]);
    await expect(parseBounceReport(big)).resolves.toEqual({ kind: 'unknown', reason: 'too large' });
  });
});

describe('parseHeaderBlocks', () => {
  it('unfolds continuation lines and splits blocks on blank lines (CRLF or LF)', () => {
    const blocks = parseHeaderBlocks('A: 1\r\nB: two\r\n  parts\r\n\r\nA: 3\n\nnot a header\n');
    expect(blocks.map((b) => Object.fromEntries(b))).toEqual([{ a: '1', b: 'two parts' }, { a: '3' }]);
  });
});
