// Automation runs end to end: a real nats-server, the real subscriber, segment and messaging services,
// a real gateway and a real SMTP relay capturing what is sent. What an integrator notices: an event
// in -> the automation's mail captured, the run's steps (tags, a field from the event, the segment
// check) visible through GET /automations/{id}/runs and the run in GET /events; every reason a send is
// skipped; IF_IN_SEGMENT continues on TRUE only and says whether FALSE or UNKNOWN ended the run, sees
// the field the run set a step before, and waits out a segment service that is down; a duplicate event, a re-published event and a
// redelivered job never mail twice; the service killed with -9 during a WAIT resumes the run within
// about a second of its due time after a restart and mails once; deleting an automation cancels a
// waiting run (no mail).
import { startCaptureRelay, startMesh, waitFor, waitForSettled, type CaptureRelay, type ServiceMesh } from '@mailer/testing';
import { schemaErrors } from '../src/openapi/validator';
import { startGateway, startStack, type GatewayHandle, type Stack } from './support/harness';
import { expectStatus, newAccount, UUID_PATTERN, type Api } from './support/subscriber-stack';

let stack: Stack;
let relay: CaptureRelay;
let mesh: ServiceMesh;
let gw: GatewayHandle;

async function account(name: string): Promise<Api> {
  const a = await newAccount(gw, name);
  expectStatus(await a.post('/sender-profiles', { name: 'Shop', fromEmail: 'shop@example.com', fromName: 'Shop' }), 201);
  expectStatus(await a.post('/email-templates', { name: 'welcome', subject: 'Welcome {{ subscriber.firstName }}', html: '<p>Your plan: {{ event.properties.plan }} ({{ event.eventKey }})</p>' }), 201);
  return a;
}

/** The barrier before counting mail: every job handled (JetStream consumers idle) and the outboxes empty. */
const settled = () => waitForSettled(stack.nc, { outboxes: mesh.outboxes() });

beforeAll(async () => {
  stack = await startStack(0);
  relay = await startCaptureRelay();
  mesh = await startMesh({ NATS_URL: stack.nats.url }, ['subscriber', 'segment']);
  gw = await startGateway({ NATS_URL: stack.nats.url, ...mesh.env, GATEWAY_UNAUTHENTICATED_PER_MINUTE: '100000' });
  // Messaging's links point at the gateway (its reader pages are forwarded there).
  await mesh.start(['messaging'], { messaging: { BOUNCE_DOMAIN: 'bounces.runs.test', SMTP_URL: relay.url, PUBLIC_BASE_URL: gw.url } });
}, 180_000);

afterAll(async () => {
  await gw?.stop();
  await mesh?.stop();
  await relay?.close();
  await stack?.stop();
});

type Run = { runId: string; eventId: string; email: string; status: string; stepIndex: number; dueAt: string | null; steps: Array<{ index: number; type: string; outcome: string; at: string; detail: string | null }> };

async function automation(a: Api, eventKey: string, steps: unknown[], entry = 'EVERY_EVENT'): Promise<string> {
  return expectStatus(await a.post('/automations', { name: eventKey, trigger: { type: 'API_REQUEST', eventKey }, entry, steps, active: true }), 201).id;
}

async function postEvent(a: Api, body: Record<string, unknown>): Promise<string> {
  return expectStatus(await a.post('/events', body), 202).eventId;
}

/** Polls the automation's runs until `until` holds. */
async function runsUntil(a: Api, automationId: string, until: (runs: Run[]) => boolean, timeoutMs = 30_000): Promise<Run[]> {
  return waitFor('the runs to reach a state', async () => {
    const runs: Run[] = expectStatus(await a.get(`/automations/${automationId}/runs?pageSize=100`), 200).items;
    return until(runs) && runs;
  }, timeoutMs);
}

const ended = (r: Run) => !['RUNNING', 'WAITING'].includes(r.status);

describe('an event runs its automation', () => {
  it('event in -> tags, a field from the event, the segment check and a mail captured; the run and its steps through the API; IF_IN_SEGMENT FALSE ends the run', async () => {
    const a = await account('journey');
    const tag = expectStatus(await a.post('/tags', { name: 'customer' }), 201);
    const plan = expectStatus(await a.post('/fields', { label: 'Plan', fieldType: 'TEXT' }), 201);
    const seg = expectStatus(
      await a.post('/segments', {
        name: 'An*',
        expression: { conditionGroups: [{ conditions: [{ subjectType: 'FIELD', fieldRef: { type: 'BUILT_IN', builtInField: 'FIRST_NAME' }, operator: 'TEXT_STARTS_WITH', operand: { kind: 'TEXT', text: 'An' } }] }] },
      }),
      201,
    );
    const ann = expectStatus(await a.post('/subscribers', { email: 'ann@journey.test', firstName: 'Ann' }), 201);
    const bob = expectStatus(await a.post('/subscribers', { email: 'bob@journey.test', firstName: 'Bob' }), 201);
    // the segment service projects subscribers from DOMAIN facts: wait until it sees Ann as a member
    await waitFor('the segment to list Ann', async () => expectStatus(await a.get(`/subscribers?segmentId=${seg.id}`), 200).items.some((s: { id: string }) => s.id === ann.id), 30_000);
    const id = await automation(a, 'plan.chosen', [
      { type: 'ADD_TAGS', tagIds: [tag.id] },
      { type: 'SET_FIELD', fieldId: plan.fieldId, fromProperty: 'plan' },
      { type: 'IF_IN_SEGMENT', segmentId: seg.id },
      { type: 'SEND_EMAIL', templateName: 'welcome' },
    ]);
    const annEvent = await postEvent(a, { eventKey: 'plan.chosen', email: 'ann@journey.test', properties: { plan: 'gold' } });
    const bobEvent = await postEvent(a, { eventKey: 'plan.chosen', email: 'bob@journey.test', properties: { plan: 'silver' } });

    const [mail] = await relay.waitFor((ms) => ms.some((m) => m.rcptTo.includes('ann@journey.test')), 30_000).then((ms) => ms.filter((m) => m.rcptTo.includes('ann@journey.test')));
    expect(mail.subject).toBe('Welcome Ann');
    expect(mail.html).toContain('Your plan: gold (plan.chosen)');
    // marketing mail carries the unsubscribe headers
    expect(mail.headers['list-unsubscribe-post']).toBe('List-Unsubscribe=One-Click');

    const runs = await runsUntil(a, id, (rs) => rs.length === 2 && rs.every(ended));
    for (const r of runs) expect(schemaErrors('AutomationRun', r)).toEqual([]);
    const annRun = runs.find((r) => r.eventId === annEvent)!;
    const bobRun = runs.find((r) => r.eventId === bobEvent)!;
    expect(annRun).toMatchObject({ runId: expect.stringMatching(UUID_PATTERN), status: 'COMPLETED', stepIndex: 4, subscriberId: ann.id, email: 'ann@journey.test', dueAt: null });
    expect(annRun.steps.map((s) => [s.index, s.type, s.outcome])).toEqual([
      [0, 'ADD_TAGS', 'DONE'],
      [1, 'SET_FIELD', 'DONE'],
      [2, 'IF_IN_SEGMENT', 'DONE'],
      [3, 'SEND_EMAIL', 'DONE'],
    ]);
    expect(annRun.steps[2].detail).toMatch(/^IN_SEGMENT: /);
    expect(bobRun).toMatchObject({ status: 'EXITED', stepIndex: 3 });
    expect(bobRun.steps[2]).toMatchObject({ type: 'IF_IN_SEGMENT', outcome: 'DONE', detail: expect.stringMatching(/^NOT_IN_SEGMENT: /) });
    // the message the run sent is listed as an AUTOMATION message
    const messages = expectStatus(await a.get('/email-messages?email=ann@journey.test'), 200).items;
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatchObject({ kind: 'AUTOMATION', templateName: 'welcome' });
    expect(annRun.steps[3].detail).toContain(messages[0].messageId);
    // the subscriber was tagged and the field set from the event (Bob too: both steps come first)
    const tagged = expectStatus(await a.get(`/subscribers?tagId=${tag.id}`), 200).items.map((s: { id: string }) => s.id).sort();
    expect(tagged).toEqual([ann.id, bob.id].sort());
    expect(JSON.stringify(expectStatus(await a.get(`/subscribers/${ann.id}`), 200).values)).toContain('gold');
    expect(relay.receivedFor('bob@journey.test')).toHaveLength(0);
    // GET /events shows each event's run; stats count the runs
    const events = expectStatus(await a.get('/events'), 200).items as Array<{ eventId: string; outcome: string; runIds: string[] }>;
    expect(events.find((e) => e.eventId === annEvent)).toMatchObject({ outcome: 'RUNS_STARTED', runIds: [annRun.runId] });
    expect(events.find((e) => e.eventId === bobEvent)).toMatchObject({ outcome: 'RUNS_STARTED', runIds: [bobRun.runId] });
    expect(expectStatus(await a.get(`/automations/${id}`), 200).stats).toEqual({ runsStarted: 2, runsCompleted: 1 });
    // status filter and paging
    const exited = expectStatus(await a.get(`/automations/${id}/runs?status=EXITED`), 200);
    expect(exited.items.map((r: Run) => r.runId)).toEqual([bobRun.runId]);
    const page2 = expectStatus(await a.get(`/automations/${id}/runs?pageSize=1&pageNumber=2`), 200);
    expect(page2).toMatchObject({ pageNumber: 2, pageSize: 1, totalItems: 2, totalPages: 2 });
    expect(page2.items).toHaveLength(1);
  });

  it('a send is skipped with its reason: subscriber not ACTIVE, address suppressed, opted out of the topic; a missing property fails SET_FIELD and the run goes on', async () => {
    const a = await account('skips');
    const topic = expectStatus(await a.post('/topics', { label: 'News' }), 201);
    const plan = expectStatus(await a.post('/fields', { label: 'Plan', fieldType: 'NUMBER' }), 201);
    const subs: Record<string, { id: string }> = {};
    subs.unconfirmed = expectStatus(await a.post('/subscribers', { email: 'unconfirmed@skips.test', subscriberStatus: 'UNCONFIRMED' }), 201);
    subs.blocked = expectStatus(await a.post('/subscribers', { email: 'blocked@skips.test', subscriberStatus: 'BLOCKED' }), 201);
    subs.suppressed = expectStatus(await a.post('/subscribers', { email: 'suppressed@skips.test' }), 201);
    expectStatus(await a.post('/suppressions', { email: 'suppressed@skips.test' }), 201);
    subs.optedOut = expectStatus(await a.post('/subscribers', { email: 'optedout@skips.test' }), 201);
    expectStatus(await a.put(`/subscribers/${subs.optedOut.id}/topics`, { topicIds: [topic.id] }), 200);
    expectStatus(await a.post(`/subscribers/${subs.optedOut.id}/topics/${topic.id}/opt-out`, {}), 200);
    subs.subscribed = expectStatus(await a.post('/subscribers', { email: 'subscribed@skips.test' }), 201);
    expectStatus(await a.put(`/subscribers/${subs.subscribed.id}/topics`, { topicIds: [topic.id] }), 200);
    const id = await automation(a, 'news.signup', [
      { type: 'SET_FIELD', fieldId: plan.fieldId, fromProperty: 'missing.value' },
      { type: 'SEND_EMAIL', templateName: 'welcome', topicId: topic.id },
    ]);
    for (const who of Object.keys(subs)) await postEvent(a, { eventKey: 'news.signup', email: `${who.toLowerCase()}@skips.test` });
    const runs = await runsUntil(a, id, (rs) => rs.length === 5 && rs.every(ended));
    const send = (who: string) => runs.find((r) => r.steps.length && (r as unknown as { subscriberId: string }).subscriberId === subs[who].id)!.steps[1];
    expect(runs.every((r) => r.status === 'COMPLETED')).toBe(true);
    expect(runs.every((r) => r.steps[0].outcome === 'FAILED' && /missing\.value/.test(r.steps[0].detail ?? ''))).toBe(true);
    expect(send('unconfirmed')).toMatchObject({ outcome: 'SKIPPED', detail: expect.stringMatching(/^SUBSCRIBER_NOT_ACTIVE: .*UNCONFIRMED/) });
    expect(send('blocked')).toMatchObject({ outcome: 'SKIPPED', detail: expect.stringMatching(/^SUBSCRIBER_NOT_ACTIVE: .*BLOCKED/) });
    expect(send('suppressed')).toMatchObject({ outcome: 'SKIPPED', detail: expect.stringMatching(/^SUPPRESSED: .*MANUAL/) });
    expect(send('optedOut')).toMatchObject({ outcome: 'SKIPPED', detail: expect.stringMatching(/^OPTED_OUT: /) });
    expect(send('subscribed')).toMatchObject({ outcome: 'DONE' });
    await relay.waitFor((ms) => ms.some((m) => m.rcptTo.includes('subscribed@skips.test')), 30_000);
    await settled();
    for (const who of ['unconfirmed', 'blocked', 'suppressed', 'optedout']) expect([who, relay.receivedFor(`${who}@skips.test`).length]).toEqual([who, 0]);
  });
});

describe('IF_IN_SEGMENT takes the three-valued result', () => {
  let a: Api;
  let id: string;
  beforeAll(async () => {
    a = await account('threevalued');
    const city = expectStatus(await a.post('/fields', { label: 'City', fieldType: 'TEXT' }), 201);
    const seg = expectStatus(
      await a.post('/segments', {
        name: 'Berlin',
        expression: { conditionGroups: [{ conditions: [{ subjectType: 'FIELD', fieldRef: { type: 'CUSTOM', fieldId: city.fieldId }, operator: 'TEXT_EQUALS', operand: { kind: 'TEXT', text: 'Berlin' } }] }] },
      }),
      201,
    );
    // the field the segment tests is set by the run itself, one step before the check: the segment
    // service must see that write (read-after-write), no waiting for its projection here
    id = await automation(a, 'city.chosen', [
      { type: 'SET_FIELD', fieldId: city.fieldId, fromProperty: 'city' },
      { type: 'IF_IN_SEGMENT', segmentId: seg.id },
      { type: 'SEND_EMAIL', templateName: 'welcome' },
    ]);
  });

  it('TRUE continues and mails; FALSE ends EXITED with NOT_IN_SEGMENT, UNKNOWN (no value) with SEGMENT_UNKNOWN; neither is mailed', async () => {
    const who = { tia: 'Berlin', uwe: 'Paris', val: undefined } as const;
    const subs: Record<string, string> = {};
    for (const name of Object.keys(who)) subs[name] = expectStatus(await a.post('/subscribers', { email: `${name}@threevalued.test`, firstName: name }), 201).id;
    const events: Record<string, string> = {};
    for (const [name, city] of Object.entries(who)) events[name] = await postEvent(a, { eventKey: 'city.chosen', email: `${name}@threevalued.test`, properties: city ? { city } : {} });
    const runs = await runsUntil(a, id, (rs) => rs.length === 3 && rs.every(ended));
    for (const r of runs) expect(schemaErrors('AutomationRun', r)).toEqual([]);
    const runOf = (name: string) => runs.find((r) => r.eventId === events[name])!;
    const steps = (name: string) => runOf(name).steps.map((s) => [s.type, s.outcome, (s.detail ?? '').split(':')[0]]);

    await relay.waitFor((ms) => ms.some((m) => m.rcptTo.includes('tia@threevalued.test')), 30_000);
    expect(runOf('tia')).toMatchObject({ status: 'COMPLETED', stepIndex: 3, subscriberId: subs.tia });
    expect(steps('tia')).toEqual([['SET_FIELD', 'DONE', ''], ['IF_IN_SEGMENT', 'DONE', 'IN_SEGMENT'], ['SEND_EMAIL', 'DONE', expect.stringMatching(/^messageId /)]]);

    expect(runOf('uwe')).toMatchObject({ status: 'EXITED', stepIndex: 2, subscriberId: subs.uwe });
    expect(steps('uwe')).toEqual([['SET_FIELD', 'DONE', ''], ['IF_IN_SEGMENT', 'DONE', 'NOT_IN_SEGMENT']]);

    // no city in the event: SET_FIELD fails, the field stays empty, TEXT_EQUALS on it is UNKNOWN
    expect(runOf('val')).toMatchObject({ status: 'EXITED', stepIndex: 2, subscriberId: subs.val });
    expect(steps('val')).toEqual([['SET_FIELD', 'FAILED', expect.any(String)], ['IF_IN_SEGMENT', 'DONE', 'SEGMENT_UNKNOWN']]);

    const exited = expectStatus(await a.get(`/automations/${id}/runs?status=EXITED`), 200).items.map((r: Run) => r.runId).sort();
    expect(exited).toEqual([runOf('uwe').runId, runOf('val').runId].sort());
    await settled();
    expect(relay.receivedFor('uwe@threevalued.test')).toHaveLength(0);
    expect(relay.receivedFor('val@threevalued.test')).toHaveLength(0);
    expect(expectStatus(await a.get('/email-messages?email=uwe@threevalued.test'), 200).items).toHaveLength(0);
  });

  it('the segment service down: the step is not decided (the run waits at it, no mail); back up, the job is retried and the run goes on', async () => {
    expectStatus(await a.post('/subscribers', { email: 'wim@threevalued.test', firstName: 'Wim' }), 201);
    await mesh.get('segment').stop();
    try {
      const eventId = await postEvent(a, { eventKey: 'city.chosen', email: 'wim@threevalued.test', properties: { city: 'Berlin' } });
      const mine = (rs: Run[]) => rs.find((r) => r.eventId === eventId);
      const [stuck] = (await runsUntil(a, id, (rs) => (mine(rs)?.steps.length ?? 0) >= 1)).filter((r) => r.eventId === eventId);
      // at least one retry of the run's job against the stopped service (JetStream counts it redelivered)
      const jsm = await stack.nc.jetstreamManager();
      await waitFor('the run job retried', async () => (await jsm.consumers.info('JOBS', 'messaging-automation-runs')).num_redelivered > 0, 30_000);
      const still = mine(expectStatus(await a.get(`/automations/${id}/runs?pageSize=100`), 200).items)!;
      expect(still).toMatchObject({ runId: stuck.runId, status: 'RUNNING', stepIndex: 1 });
      expect(still.steps.map((s) => s.type)).toEqual(['SET_FIELD']);
      expect(relay.receivedFor('wim@threevalued.test')).toHaveLength(0);
    } finally {
      // back at the same address and data directory (messaging's channel points there)
      await mesh.restart('segment');
    }
    await relay.waitFor((ms) => ms.some((m) => m.rcptTo.includes('wim@threevalued.test')), 90_000);
    const done = (await runsUntil(a, id, (rs) => rs.some((r) => r.email === 'wim@threevalued.test' && ended(r)))).find((r) => r.email === 'wim@threevalued.test')!;
    expect(done.status).toBe('COMPLETED');
    expect(done.steps.map((s) => [s.type, s.outcome, (s.detail ?? '').split(':')[0]])).toEqual([['SET_FIELD', 'DONE', ''], ['IF_IN_SEGMENT', 'DONE', 'IN_SEGMENT'], ['SEND_EMAIL', 'DONE', expect.stringMatching(/^messageId /)]]);
    expect(relay.receivedFor('wim@threevalued.test')).toHaveLength(1);
  }, 150_000);
});

describe('never twice', () => {
  it('a duplicate event (same idempotencyKey), the event re-published past de-duplication and a redelivered run job mail once', async () => {
    const a = await account('twice');
    expectStatus(await a.post('/subscribers', { email: 'cy@twice.test', firstName: 'Cy' }), 201);
    const id = await automation(a, 'order.paid', [{ type: 'SEND_EMAIL', templateName: 'welcome' }]);
    const first = expectStatus(await a.post('/events', { eventKey: 'order.paid', email: 'cy@twice.test', idempotencyKey: 'o-1', properties: { plan: 'p' } }), 202);
    const again = expectStatus(await a.post('/events', { eventKey: 'order.paid', email: 'cy@twice.test', idempotencyKey: 'o-1', properties: { plan: 'p' } }), 202);
    expect(again).toEqual({ eventId: first.eventId, duplicate: true });
    // the same event on EVENTS again under another msgID (what a re-publish or a consumer reset does)
    const now = new Date().toISOString();
    const js = stack.nc.jetstream();
    await js.publish(`events.${a.accountId}`, JSON.stringify({ eventId: first.eventId, accountId: a.accountId, eventKey: 'order.paid', email: 'cy@twice.test', occurredAt: now, receivedAt: now, triggerAutomations: true, properties: { plan: 'p' }, consent: null }), { msgID: `${first.eventId}-again` });
    const [run] = await runsUntil(a, id, (rs) => rs.length >= 1 && rs.every(ended));
    // the run's job delivered again (another msgID): the run is finished, nothing is sent
    await js.publish(`jobs.automation-run.${a.accountId}`, JSON.stringify({ accountId: a.accountId, runId: run.runId }), { msgID: `${run.runId}-again` });
    await relay.waitFor((ms) => ms.some((m) => m.rcptTo.includes('cy@twice.test')), 30_000);
    // every message handled (the duplicates included), then counted
    await settled();
    expect(relay.receivedFor('cy@twice.test')).toHaveLength(1);
    const runs = await runsUntil(a, id, (rs) => rs.every(ended));
    expect(runs.filter((r) => r.eventId === first.eventId)).toHaveLength(1);
    expect(runs).toHaveLength(1);
    expect(expectStatus(await a.get('/email-messages?email=cy@twice.test'), 200).items).toHaveLength(1);
  });

  it('entry ONCE: a second event of the subscriber starts no run', async () => {
    const a = await account('once');
    expectStatus(await a.post('/subscribers', { email: 'dee@once.test' }), 201);
    const id = await automation(a, 'visit', [{ type: 'WAIT', duration: 'PT1S' }], 'ONCE');
    await postEvent(a, { eventKey: 'visit', email: 'dee@once.test' });
    await runsUntil(a, id, (rs) => rs.length === 1);
    const second = await postEvent(a, { eventKey: 'visit', email: 'dee@once.test' });
    const e = await waitFor('the second event recorded', async () => expectStatus(await a.get('/events'), 200).items.find((x: { eventId: string }) => x.eventId === second), 30_000);
    expect(e).toMatchObject({ outcome: 'NO_MATCHING_AUTOMATION', runIds: [] });
    expect((await runsUntil(a, id, (rs) => rs.length === 1 && rs.every(ended))).map((r) => r.status)).toEqual(['COMPLETED']);
  });
});

describe('WAIT survives restarts', () => {
  it('messaging killed with -9 during a WAIT: after the restart the run resumes within about a second of its due time and mails once', async () => {
    const a = await account('restart');
    expectStatus(await a.post('/subscribers', { email: 'eve@restart.test', firstName: 'Eve' }), 201);
    const id = await automation(a, 'trial.started', [
      // long enough for a restart on a loaded machine to happen during it
      { type: 'WAIT', duration: 'PT10S' },
      { type: 'SEND_EMAIL', templateName: 'welcome' },
    ]);
    await postEvent(a, { eventKey: 'trial.started', email: 'eve@restart.test', properties: { plan: 'trial' } });
    const [waiting] = await runsUntil(a, id, (rs) => rs.length === 1 && rs[0].status === 'WAITING');
    expect(waiting).toMatchObject({ stepIndex: 0, dueAt: expect.any(String), steps: [] });
    const dueAt = Date.parse(waiting.dueAt!);
    await mesh.restart('messaging', { kill9: true });
    expect(Date.now()).toBeLessThan(dueAt); // the restart happened during the wait
    const [mail] = await relay.waitFor((ms) => ms.some((m) => m.rcptTo.includes('eve@restart.test')), 30_000).then((ms) => ms.filter((m) => m.rcptTo.includes('eve@restart.test')));
    const [run] = await runsUntil(a, id, (rs) => rs.length === 1 && ended(rs[0]));
    expect(run).toMatchObject({ status: 'COMPLETED', dueAt: null });
    expect(run.steps.map((s) => [s.type, s.outcome])).toEqual([['WAIT', 'DONE'], ['SEND_EMAIL', 'DONE']]);
    const resumedAt = Date.parse(run.steps[0].at);
    expect(resumedAt).toBeGreaterThanOrEqual(dueAt);
    // API: a WAIT resumes within 1 s of its due time. The restarted service arms its timer for the
    // run; without it the run waits for the next sweep (up to 5 s). Slack for a loaded 2-core machine.
    expect(resumedAt - dueAt).toBeLessThan(2_500);
    expect(mail.receivedAt.getTime()).toBeGreaterThanOrEqual(dueAt);
    await settled();
    expect(relay.receivedFor('eve@restart.test')).toHaveLength(1);
  }, 120_000);

  it('deleting an automation cancels its waiting run (no mail at the due time); deactivating one lets its waiting run finish', async () => {
    const a = await account('cancel');
    expectStatus(await a.post('/subscribers', { email: 'fay@cancel.test' }), 201);
    const id = await automation(a, 'cart.left', [
      { type: 'WAIT', duration: 'PT2S' },
      { type: 'SEND_EMAIL', templateName: 'welcome' },
    ]);
    // a second automation on the same key, deactivated (not deleted) during the wait
    const kept = await automation(a, 'cart.left', [
      { type: 'WAIT', duration: 'PT3S' },
      { type: 'SEND_EMAIL', templateName: 'welcome' },
    ]);
    await postEvent(a, { eventKey: 'cart.left', email: 'fay@cancel.test' });
    await runsUntil(a, id, (rs) => rs.length === 1 && rs[0].status === 'WAITING');
    expect((await a.delete(`/automations/${id}`)).status).toBe(204);
    // deactivating the other one only stops new runs: its waiting run goes on
    expectStatus(await a.put(`/automations/${kept}`, { name: 'kept', trigger: { type: 'API_REQUEST', eventKey: 'cart.left' }, steps: [{ type: 'WAIT', duration: 'PT3S' }, { type: 'SEND_EMAIL', templateName: 'welcome' }], active: false }), 200);
    // the kept run's mail comes after the deleted run's due time: had that run gone on, its job is done by the barrier
    await relay.waitFor((ms) => ms.some((m) => m.rcptTo.includes('fay@cancel.test')), 30_000);
    await settled();
    expect(relay.receivedFor('fay@cancel.test')).toHaveLength(1); // the deactivated automation's only
    expect((await runsUntil(a, kept, (rs) => rs.length === 1 && ended(rs[0])))[0].status).toBe('COMPLETED');
  }, 60_000);
});
