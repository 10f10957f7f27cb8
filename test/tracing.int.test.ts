// OpenTelemetry is loaded before the instrumented modules: one request through the gateway yields
// spans in the gateway and in the subscriber service that share a trace id (context carried over
// gRPC), and the gateway's log line of that request carries the same trace id.
import { createAccount, serviceAddresses, startGateway, startNatsServer, startService, type GatewayHandle, type RunningService } from '@mailer/testing';

let nats: Awaited<ReturnType<typeof startNatsServer>>;
let subscriber: RunningService;
let gateway: GatewayHandle;

beforeAll(async () => {
  nats = await startNatsServer();
  const otel = { OTEL_TRACES_EXPORTER: 'console', OTEL_BSP_SCHEDULE_DELAY: '100' };
  subscriber = await startService('subscriber', { NATS_URL: nats.url, ...otel });
  gateway = await startGateway({ NATS_URL: nats.url, ...serviceAddresses([subscriber]), ...otel });
});

afterAll(async () => {
  await gateway?.stop();
  await subscriber?.stop();
  await nats?.stop();
});

const traceIdsIn = (text: string) => new Set([...text.matchAll(/traceId: '([0-9a-f]{32})'/g)].map((m) => m[1]));

it('propagates one trace from the HTTP request through gRPC into the service', async () => {
  const { apiKey } = await createAccount(gateway, 'traced');
  const res = await fetch(`${gateway.url}/subscribers`, {
    method: 'POST',
    headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'traced@example.org' }),
  });
  expect(res.status).toBe(201);
  const requestId = res.headers.get('x-request-id')!;

  let shared: string[] = [];
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline && shared.length === 0) {
    await new Promise((r) => setTimeout(r, 200));
    const inService = traceIdsIn(subscriber.output());
    shared = [...traceIdsIn(gateway.output())].filter((id) => inService.has(id));
  }
  expect(shared).toHaveLength(1);
  expect(subscriber.output()).toContain('mailer.subscriber.v1.SubscriberService/AddSubscriber');

  const logLine = gateway
    .output()
    .split('\n')
    .find((l) => l.includes(`"requestId":"${requestId}"`) && l.includes('"msg":"request"'));
  expect(logLine).toBeDefined();
  expect(JSON.parse(logLine!).traceId).toBe(shared[0]);
});
