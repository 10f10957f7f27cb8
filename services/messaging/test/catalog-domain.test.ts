// Pure rules of sender profiles and email templates: address canonical form, header-safe names,
// the allowed-domain setting, template names, tracking defaults, and the bounded LRU that caches
// compiled templates.
import { DomainError, Lru } from '@mailer/kit';
import { checkTemplateName, templateDomainError, trackingOf } from '../src/templates/domain/email-template';
import { canonicalAddress, senderProfileValues } from '../src/templates/domain/sender-profile';
import { TemplateError } from '@mailer/templates';

const errorIdOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    if (err instanceof DomainError) return err.errorId;
    throw err;
  }
  throw new Error('expected a DomainError');
};

describe('sender profile values', () => {
  const input = { name: ' News ', fromEmail: ' News@Example.COM ', fromName: ' Example ' };
  it('trims and lowercases addresses, trims names', () => {
    expect(senderProfileValues(input, [])).toEqual({ name: 'News', fromEmail: 'news@example.com', fromName: 'Example', replyTo: null });
    expect(senderProfileValues({ ...input, replyTo: 'Help@X.org' }, []).replyTo).toBe('help@x.org');
    expect(canonicalAddress('a@b')).toBeNull();
    expect(canonicalAddress(`${'a'.repeat(250)}@x.org`)).toBeNull();
  });
  it('refuses line breaks and control characters in what becomes a header', () => {
    for (const fromName of ['a\nBcc: x@y.z', 'a\rb', 'a\u0000b', 'a\u2028b']) expect(errorIdOf(() => senderProfileValues({ ...input, fromName }, []))).toBe('validation_failed');
    expect(errorIdOf(() => senderProfileValues({ ...input, fromEmail: 'a\n@x.org' }, []))).toBe('invalid_email');
  });
  it('MAIL_ALLOWED_FROM_DOMAINS limits fromEmail only, by exact domain', () => {
    expect(errorIdOf(() => senderProfileValues(input, ['example.org']))).toBe('sender_domain_not_allowed');
    expect(errorIdOf(() => senderProfileValues({ ...input, fromEmail: 'a@sub.example.com' }, ['example.com']))).toBe('sender_domain_not_allowed');
    expect(senderProfileValues({ ...input, replyTo: 'x@anywhere.net' }, ['example.com']).replyTo).toBe('x@anywhere.net');
  });
});

describe('email template rules', () => {
  it('names match the pattern of the API contract', () => {
    for (const ok of ['a', 'order.confirmation', 'x-1_2', 'a'.repeat(100)]) expect(checkTemplateName(ok)).toBe(ok);
    for (const bad of ['', 'A', '-a', '.a', 'a b', 'a/b', 'a'.repeat(101)]) expect(errorIdOf(() => checkTemplateName(bad))).toBe('validation_failed');
  });
  it('tracking defaults each member to true', () => {
    expect(trackingOf(undefined)).toEqual({ opens: true, clicks: true });
    expect(trackingOf({ clicks: false })).toEqual({ opens: true, clicks: false });
    expect(trackingOf({ opens: false, clicks: null })).toEqual({ opens: false, clicks: true });
  });
  it('template errors keep their errorId and details', () => {
    const err = templateDomainError(new TemplateError('template_syntax_error', 'bad', [{ path: 'html', problem: 'line 1, col 2: x' }]));
    expect([err.errorId, err.details]).toEqual(['template_syntax_error', [{ path: 'html', problem: 'line 1, col 2: x' }]]);
  });
});

describe('Lru', () => {
  it('evicts the least recently used entry past maxEntries', () => {
    const lru = new Lru<string, number>(2);
    lru.set('a', 1);
    lru.set('b', 2);
    lru.get('a');
    lru.set('c', 3);
    expect([lru.get('a'), lru.get('b'), lru.get('c'), lru.size]).toEqual([1, undefined, 3, 2]);
  });
  it('evicts by total weight, and never caches a value heavier than the whole cache', () => {
    const lru = new Lru<string, number>(100, 10);
    lru.set('a', 1, 6);
    lru.set('b', 2, 6);
    expect([lru.get('a'), lru.get('b')]).toEqual([undefined, 2]);
    lru.set('huge', 3, 11);
    expect([lru.get('huge'), lru.get('b')]).toEqual([undefined, 2]);
    lru.set('b', 4, 1);
    lru.set('c', 5, 9);
    expect([lru.get('b'), lru.get('c')]).toEqual([4, 5]);
  });
});
