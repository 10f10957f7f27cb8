import { expectError } from './support/harness';
import { startWiredStack, type WiredStack } from './support/segment-wired-stack';
import { expectStatus, type Api } from './support/subscriber-stack';

// A service that does not answer: the 503 names the missing capability and nothing about hosts,
// ports or the transport, both when the gateway's own call fails (gateway -> subscriber service) and
// when a service's call to its peer fails (gateway -> segment service -> subscriber service).
// The other direction (segment service down behind the subscriber service) is in segment-members.int.

let env: WiredStack;
let a: Api;
beforeAll(async () => {
  env = await startWiredStack();
  a = await env.account('outage');
  expectStatus(await a.post('/subscribers', { email: 'ann@example.org', firstName: 'Ann' }), 201);
}, 90_000);
afterAll(() => env?.stop());

const LEAKS = /ECONNREFUSED|127\.0\.0\.1|localhost|:\d{2,5}\b|\b\d{4,5}\b|grpc|stack|No connection/i;
const expression = { conditionGroups: [{ conditions: [{ subjectType: 'FIELD', fieldRef: { type: 'BUILT_IN', builtInField: 'FIRST_NAME' }, operator: 'TEXT_STARTS_WITH', operand: { kind: 'TEXT', text: 'a' } }] }] };

describe('subscriber service down', () => {
  beforeAll(async () => {
    await env.subscriber.stop();
  });

  it('service -> service: a segment cannot be checked against the catalog -> 503 catalog_unavailable, fixed text', async () => {
    for (const res of [await a.post('/segments', { name: 'A*', expression }), await a.post('/segments/preview', { expression })]) {
      expectError(res, 503, 'catalog_unavailable');
      expect(res.json.message).toBe('The subscriber service, whose fields, tags and topics a segment is checked against, is unavailable; retry later.');
      expect(res.text).not.toMatch(LEAKS);
    }
  });

  it('gateway -> service: 503 service_unavailable naming the service, fixed text', async () => {
    for (const res of [await a.get('/subscribers'), await a.get('/topics'), await a.post('/subscribers', { email: 'bob@example.org' })]) {
      expectError(res, 503, 'service_unavailable');
      expect(res.json).toEqual({ errorId: 'service_unavailable', message: 'The subscriber service is unavailable; retry later.' });
      expect(res.text).not.toMatch(LEAKS);
    }
  });
});
