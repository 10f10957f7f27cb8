// The form service serves its public routes on FORM_HTTP_ADDR (the address the gateway forwards
// /public/forms, /public/pages and /public/confirm to): an unknown path gets the service's own 404.
import { freePort, startNatsServer, startService, type NatsServerHandle, type RunningService } from '@mailer/testing';

let nats: NatsServerHandle;
let svc: RunningService;
let httpAddr: string;

beforeAll(async () => {
  nats = await startNatsServer();
  httpAddr = `127.0.0.1:${await freePort()}`;
  svc = await startService('form', { NATS_URL: nats.url, FORM_HTTP_ADDR: httpAddr });
}, 60_000);

afterAll(async () => {
  await svc?.stop();
  await nats?.stop();
});

test('the public listener answers on FORM_HTTP_ADDR', async () => {
  const res = await fetch(`http://${httpAddr}/public/forms/nope/unknown`);
  expect(res.status).toBe(404);
  expect(res.headers.get('x-request-id')).toBeTruthy();
});
