import { DomainError } from '@mailer/kit';
import { canonicalEmail } from '../src/domain/email';
import { manualStatus, normalizeFirstName, prefixPattern, statusForNewSubscriber } from '../src/domain/subscriber';

const errorIdOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
  } catch (err) {
    return err instanceof DomainError ? err.errorId : `not a DomainError: ${String(err)}`;
  }
  return undefined;
};

describe('canonicalEmail', () => {
  it('trims and lowercases the whole address', () => {
    expect(canonicalEmail('  Ann.Lee@Example.ORG ')).toBe('ann.lee@example.org');
  });
  it.each(['', '   ', 'no-at-sign', 'a@b', 'two@@example.org', 'Ann <ann@example.org>', `${'x'.repeat(250)}@example.org`])(
    'refuses %p with invalid_email',
    (raw) => expect(errorIdOf(() => canonicalEmail(raw))).toBe('invalid_email'),
  );
});

describe('statusForNewSubscriber', () => {
  it('defaults to ACTIVE', () => expect(statusForNewSubscriber(undefined)).toBe('ACTIVE'));
  it.each(['ACTIVE', 'UNSUBSCRIBED', 'BLOCKED', 'UNCONFIRMED'] as const)('accepts %s', (s) => expect(statusForNewSubscriber(s)).toBe(s));
  it.each(['BOUNCED', 'COMPLAINED'] as const)('refuses %s: it is reached by events, not set by hand', (s) =>
    expect(errorIdOf(() => statusForNewSubscriber(s))).toBe('subscriber_status_not_manual'),
  );
});

describe('manualStatus', () => {
  it.each(['ACTIVE', 'UNSUBSCRIBED', 'BLOCKED'] as const)('accepts %s', (s) => expect(manualStatus(s)).toBe(s));
  it.each(['UNCONFIRMED', 'BOUNCED', 'COMPLAINED'] as const)('refuses %s with subscriber_status_not_manual', (s) =>
    expect(errorIdOf(() => manualStatus(s))).toBe('subscriber_status_not_manual'),
  );
  it('requires a status', () => expect(errorIdOf(() => manualStatus(undefined))).toBe('validation_failed'));
});

describe('normalizeFirstName', () => {
  it('keeps the trimmed name; blank and null mean none', () => {
    expect(normalizeFirstName(' Ann ')).toBe('Ann');
    expect(normalizeFirstName('   ')).toBeNull();
    expect(normalizeFirstName(null)).toBeNull();
  });
  it('refuses names longer than 255 characters', () => expect(errorIdOf(() => normalizeFirstName('x'.repeat(256)))).toBe('validation_failed'));
});

describe('prefixPattern', () => {
  it('anchors, lowercases and escapes regex characters', () => {
    const re = new RegExp(prefixPattern(' A.b+('));
    expect(re.test('a.b+(c@x.org')).toBe(true);
    expect(re.test('axb+(c@x.org')).toBe(false);
    expect(re.test('za.b+(')).toBe(false);
  });
  it('refuses searches longer than 254 characters', () => expect(errorIdOf(() => prefixPattern('x'.repeat(255)))).toBe('validation_failed'));
});
