import { randomUUID } from 'node:crypto';
import { call, sleep } from './support/harness';
import { startWiredStack, type WiredStack } from './support/segment-wired-stack';
import { expectStatus, UNKNOWN_ID, type Api } from './support/subscriber-stack';

// One request id across processes: the gateway's X-Request-Id goes to every service as gRPC metadata
// (and on from service to service), and each process logs it next to the call's outcome, so an
// operator can follow one request through the logs of gateway, subscriber and segment services.
// Real processes (nats-server, subscriber and segment services wired to each other, gateway); the
// services log at debug so successful calls' outcome lines are visible.

let env: WiredStack;
let a: Api;
beforeAll(async () => {
  env = await startWiredStack({ LOG_LEVEL: 'debug' });
  a = await env.account('request-ids');
}, 90_000);
afterAll(() => env?.stop());

type Line = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function lines(proc: { output(): string }): Line[] {
  return proc
    .output()
    .split('\n')
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as Line];
      } catch {
        return [];
      }
    });
}

/** The process's log lines with this request id, once `want` is among them (logs arrive through a pipe, after the response). */
async function logged(proc: { output(): string }, requestId: string, want: (l: Line) => boolean): Promise<Line[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const mine = lines(proc).filter((l) => l.requestId === requestId);
    if (mine.some(want)) return mine;
    if (Date.now() > deadline) throw new Error(`no log line with requestId ${requestId} matching ${want}; lines with it: ${JSON.stringify(mine)}`);
    await sleep(50);
  }
}

const rpc = (name: string) => (l: Line) => typeof l.rpc === 'string' && l.rpc.endsWith(`/${name}`);
const withId = (requestId: string) => ({ 'x-request-id': requestId });
const newId = () => `rid-${randomUUID()}`;

it('a request that reaches the service: its id is in the gateway log and the service log, without the request body', async () => {
  const rid = newId();
  const email = `secret-${randomUUID()}@example.org`;
  const res = await call(env.gw, 'POST', '/subscribers', { apiKey: a.apiKey, body: { email, firstName: 'Ann' }, headers: withId(rid) });
  expectStatus(res, 201);
  expect(res.headers.get('x-request-id')).toBe(rid);

  const gw = await logged(env.gw, rid, (l) => l.msg === 'request');
  expect(gw.find((l) => l.msg === 'request')).toMatchObject({ status: 201, path: '/subscribers' });
  const svc = await logged(env.subscriber, rid, rpc('AddSubscriber'));
  expect(svc.find(rpc('AddSubscriber'))).toMatchObject({ service: 'subscriber', code: 'OK', level: 20 });
  expect(JSON.stringify([...gw, ...svc])).not.toContain(email);
  expect(env.subscriber.output()).not.toContain(email);
});

it('a domain error: the service logs the request id with the errorId, not the message (it can quote personal data)', async () => {
  const rid = newId();
  const res = await call(env.gw, 'GET', `/subscribers/${UNKNOWN_ID}`, { apiKey: a.apiKey, headers: withId(rid) });
  expect({ status: res.status, errorId: res.json?.errorId }).toEqual({ status: 404, errorId: 'subscriber_not_found' });

  const gw = await logged(env.gw, rid, (l) => l.msg === 'request');
  expect(gw.find((l) => l.msg === 'request')).toMatchObject({ status: 404, errorId: 'subscriber_not_found' });
  const svc = await logged(env.subscriber, rid, rpc('GetSubscriber'));
  // info, not warn: the caller asked for something that does not exist; the service is fine
  expect(svc.find(rpc('GetSubscriber'))).toMatchObject({ level: 30, code: 'NOT_FOUND', errorId: 'subscriber_not_found' });

  const byEmail = newId();
  const email = `nobody-${randomUUID()}@example.org`;
  const missing = await call(env.gw, 'GET', `/subscribers/by-email/${encodeURIComponent(email)}`, { apiKey: a.apiKey, headers: withId(byEmail) });
  expect(missing.status).toBe(404);
  expect(missing.json.message).toContain(email); // the client is told ...
  const line = (await logged(env.subscriber, byEmail, rpc('GetSubscriberByEmail'))).find(rpc('GetSubscriberByEmail'));
  expect(line).toMatchObject({ errorId: 'subscriber_not_found' });
  expect(env.subscriber.output()).not.toContain(email); // ... the log is not
});

it('without X-Request-Id the gateway makes one, answers it, and the service logs that same id', async () => {
  const res = await call(env.gw, 'GET', '/tags', { apiKey: a.apiKey });
  expectStatus(res, 200);
  const rid = res.headers.get('x-request-id')!;
  expect(rid).toBeTruthy();
  await logged(env.gw, rid, (l) => l.msg === 'request');
  await logged(env.subscriber, rid, rpc('ListTags'));
});

it('services forward the request id to the services they call (segment -> subscriber, subscriber -> segment, field usages)', async () => {
  // segment service validates the expression against the subscriber service's catalog
  const created = newId();
  const expression = { conditionGroups: [{ conditions: [{ subjectType: 'FIELD', fieldRef: { type: 'BUILT_IN', builtInField: 'FIRST_NAME' }, operator: 'TEXT_STARTS_WITH', operand: { kind: 'TEXT', text: 'a' } }] }] };
  const seg = expectStatus(await call(env.gw, 'POST', '/segments', { apiKey: a.apiKey, body: { name: `s-${created}`, expression }, headers: withId(created) }), 201);
  await logged(env.segment, created, rpc('CreateSegment'));
  await logged(env.subscriber, created, rpc('ListFields'));

  // subscriber service asks the segment service for the members
  const members = newId();
  expectStatus(await call(env.gw, 'GET', `/segments/${seg.id}/subscribers`, { apiKey: a.apiKey, headers: withId(members) }), 200);
  await logged(env.subscriber, members, rpc('ListSubscribers'));
  await logged(env.segment, members, rpc('ListSegmentMembers'));

  // subscriber service asks every usage source, the real segment service among them
  const field = expectStatus(await a.post('/fields', { personalizationTagName: 'score', label: 'Score', fieldType: 'NUMBER' }), 201);
  const usage = newId();
  expectStatus(await call(env.gw, 'GET', `/fields/${field.fieldId}/usage`, { apiKey: a.apiKey, headers: withId(usage) }), 200);
  await logged(env.subscriber, usage, rpc('GetFieldUsage'));
  await logged(env.segment, usage, rpc('ListFieldUsages'));
});
