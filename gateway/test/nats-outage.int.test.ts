import { call, createAccount, expectError, event, startStack, type Stack } from './support/harness';

// When NATS (accounts, budgets, idempotency, the EVENTS stream) is unreachable, the gateway answers
// 503 service_unavailable, never 500 or a hang, stays alive, and says so on /readyz.
let stack: Stack;

beforeAll(async () => {
  stack = await startStack(1);
});
afterAll(() => stack.stop());

it('NATS down -> 503 service_unavailable; /healthz still up; /readyz 503', async () => {
  const [gw] = stack.gateways;
  const { apiKey } = await createAccount(gw, 'outage');
  expect((await call(gw, 'POST', '/events', { apiKey, body: event() })).status).toBe(202);

  await stack.nc.close();
  await stack.nats.stop();

  const started = Date.now();
  expectError(await call(gw, 'POST', '/events', { apiKey, body: event() }), 503, 'service_unavailable');
  expectError(await call(gw, 'GET', '/subscribers'), 503, 'service_unavailable');
  expect(Date.now() - started).toBeLessThan(25_000);
  expect((await call(gw, 'GET', '/healthz')).status).toBe(200);
  expectError(await call(gw, 'GET', '/readyz'), 503, 'service_unavailable');
  expect(gw.output()).not.toContain(apiKey.slice(3));
}, 60_000);
