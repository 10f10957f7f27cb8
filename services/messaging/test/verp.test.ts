import { parseVerpAddress, verpAddress } from '../src/readers/domain/verp';

const secret = 'test-verp-secret-0123456789';
const domain = 'bounces.localhost';
const messageId = '665f1c2ab3e4d5f6a7b8c9d0';

describe('VERP return paths', () => {
  const addr = verpAddress({ messageId }, secret, domain);

  it('round-trips and stays a short, plain local part', () => {
    expect(parseVerpAddress(addr, secret, domain)).toEqual({ messageId });
    const local = addr.split('@')[0];
    expect(local.length).toBeLessThanOrEqual(64);
    expect(local).toMatch(/^[a-z0-9-]+$/);
    expect(addr.endsWith(`@${domain}`)).toBe(true);
  });

  it('parses case-changed and bracketed forms', () => {
    expect(parseVerpAddress(addr.toUpperCase(), secret, domain)).toEqual({ messageId });
    expect(parseVerpAddress(`<${addr}>`, secret, 'BOUNCES.localhost')).toEqual({ messageId });
  });

  it('gives different addresses for different messages', () => {
    expect(verpAddress({ messageId: 'a1' }, secret, domain)).not.toBe(verpAddress({ messageId: 'a2' }, secret, domain));
  });

  const [local] = addr.split('@');
  const macPart = local.split('-')[2];
  const flip = (c: string) => (c === '0' ? '1' : '0');
  const forged: Array<[string, string]> = [
    ['foreign domain', `${local}@evil.example`],
    ['sub-domain', `${local}@x.${domain}`],
    ['other secret', verpAddress({ messageId }, 'another-secret', domain)],
    ['edited message id', `b-665f1c2ab3e4d5f6a7b8c9d1-${macPart}@${domain}`],
    ['edited mac', `${local.slice(0, -1)}${flip(local.slice(-1))}@${domain}`],
    ['truncated mac', `${local.slice(0, -1)}@${domain}`],
    ['extended mac', `${local}0@${domain}`],
    ['mac moved to other id', `b-abc-${macPart}@${domain}`],
    ['no prefix', `${local.slice(2)}@${domain}`],
    ['no domain', local],
    ['empty', ''],
    ['garbage', '@@@'],
    ['non-hex mac', `b-${messageId}-${'z'.repeat(20)}@${domain}`],
    ['very long', `${'a'.repeat(400)}@${domain}`],
  ];
  it.each(forged)('returns null for %s', (_name, value) => {
    expect(parseVerpAddress(value, secret, domain)).toBeNull();
  });

  it('returns null with an empty secret and refuses to issue bad ids', () => {
    expect(parseVerpAddress(addr, '', domain)).toBeNull();
    expect(() => verpAddress({ messageId: 'Has Space' }, secret, domain)).toThrow();
    expect(() => verpAddress({ messageId: 'ABC' }, secret, domain)).toThrow();
    expect(() => verpAddress({ messageId: 'x'.repeat(41) }, secret, domain)).toThrow();
  });
});
