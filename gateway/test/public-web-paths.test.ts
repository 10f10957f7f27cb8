import { staysInPrefix } from '../src/routes/public-web';

// Which paths the gateway forwards to a public page owner: only those that stay inside their prefix
// whatever the owner's router decodes or normalises (the forwarding itself: public-web.int.test.ts).
describe('staysInPrefix', () => {
  it.each([
    ['/t/o/AbC_-123', '/t/'],
    ['/u/AbC_-123', '/u/'],
    ['/public/pages/caf%C3%A9', '/public/pages/'],
  ])('forwards %s', (path, prefix) => expect(staysInPrefix(path, prefix)).toBe(true));

  it.each([
    '/t/../admin',
    '/t/o/../../healthz',
    '/t/..%2f..%2fmetrics',
    '/t/%2e%2e/%2e%2e/metrics',
    '/t/%2E%2E%2Fsecret',
    '/t/o/..%5c..%5cx',
    '/t/o\\..\\x',
    '/t/./o/x',
    '/t/o/%00',
    '/t/o/%zz',
    '/t/%252e%252e%252fmetrics', // double-encoded
    '/tx/o/abc',
  ])('refuses %s', (path) => expect(staysInPrefix(path, '/t/')).toBe(false));
});
