import { sanitizeRequestId } from '../src/middleware/request-context';
import { hasApiKeyInUrl } from '../src/middleware/api-key-in-url';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('sanitizeRequestId', () => {
  it.each(['abc', 'A-b_c.d:e', 'x'.repeat(128), '0', '3f0c2a5e-2a7b-4c47-9a43-1d8f3a0e6b21'])('echoes a sane value %p', (v) => {
    expect(sanitizeRequestId(v)).toBe(v);
  });
  it.each([undefined, '', 'x'.repeat(129), 'has space', 'semi;colon', 'new\nline', 'ünï', '<script>', 'a/b', ['a', 'b']])(
    'generates a UUID instead of %p',
    (v) => {
      expect(sanitizeRequestId(v as string)).toMatch(UUID);
    },
  );
  it('generates a new id every time', () => {
    expect(sanitizeRequestId(undefined)).not.toBe(sanitizeRequestId(undefined));
  });
});

describe('hasApiKeyInUrl', () => {
  it.each([
    '/subscribers?apiKey=x',
    '/subscribers?APIKEY=x',
    '/subscribers?api_key=x',
    '/subscribers?Api-Key=x',
    '/subscribers?key=',
    '/subscribers?KEY',
    '/subscribers?x-api-key=mk_abc',
    '/subscribers?X-Api-Key=1&pageSize=2',
    '/subscribers?pageSize=2&apikey=1',
    '/events?%61pikey=x', // percent-encoded name
    '/healthz?api_key=1',
  ])('finds a key in %p', (url) => expect(hasApiKeyInUrl(url)).toBe(true));

  it.each(['/subscribers', '/subscribers?', '/subscribers?pageSize=1&search=key', '/subscribers?keyword=x', '/subscribers?monkey=1', '/subscribers/apiKey', '/x?search=apiKey%3D1'])(
    'no key in %p',
    (url) => expect(hasApiKeyInUrl(url)).toBe(false),
  );
});
