// Broadcasts end to end: the real gateway, subscriber, segment, form, messaging (with its delivery
// worker) and rss services, a capture relay for every mail. What an integrator sees: the API and its
// errors, the audience rules with every exclusion reason and a reconciliation that adds up, test
// sends, marketing headers and footer, broadcast.sent, resend to non-openers (human opens only),
// A/B subjects decided by human clicks while a scanner clicks the other variant, send windows in the
// reader's zone, cancel, the 409 guards, FAILED after bounded retries, and a scheduled broadcast
// that falls due while messaging is down starting within seconds of its restart.
import { schemaErrors } from '../src/openapi/validator';
import { addReaders, broadcastAccount, broadcastWhen, getBroadcast, lastFact, recipientsOf, sleep, startBroadcastStack, trackingLinks, type BroadcastStack } from './support/broadcast-stack';
import { expectError } from './support/harness';
import { expectStatus, UNKNOWN_ID, UUID_PATTERN, type Api } from './support/subscriber-stack';

jest.setTimeout(300_000);

let s: BroadcastStack;
const BROWSER = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15';
const SCANNER = 'Mozilla/5.0 (compatible; Barracuda Sentinel (EE))';

beforeAll(async () => {
  // A/B minutes of 1 s (decideAfterMinutes 15 -> 15 s); failed steps retried after 1 s, FAILED at the second.
  s = await startBroadcastStack({ BROADCAST_AB_MINUTE_MS: '1000', BROADCAST_SEND_MAX_ATTEMPTS: '2', BROADCAST_SEND_PAGE_SIZE: '7' });
});
afterAll(async () => s?.stop());

const mailsTo = (domain: string) => s.relay.messages.filter((m) => m.rcptTo[0]?.endsWith(domain));

async function segmentOf(a: Api, name: string, conditions: unknown[]): Promise<string> {
  return expectStatus(await a.post('/segments', { name, expression: { conditionGroups: [{ conditions }] } }), 201).id;
}

/** Waits until the segment service's projection has `n` members (it follows DOMAIN facts). */
async function projected(a: Api, segmentId: string, n: number): Promise<void> {
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(200)) {
    if (Number(expectStatus(await a.get(`/subscribers?segmentId=${segmentId}&pageSize=1`), 200).totalItems) >= n) return;
  }
  throw new Error('the segment never had its members');
}

describe('a broadcast to an audience with every exclusion reason', () => {
  let a: Api;
  let topicId: string;
  let segmentId: string;
  let broadcastId: string;

  beforeAll(async () => {
    const acc = await broadcastAccount(s.env, 'rules');
    ({ a, topicId } = acc);
    const city = expectStatus(await a.post('/fields', { label: 'City', fieldType: 'TEXT', personalizationTagName: 'city' }), 201);
    const cityIs = (text: string) => ({ fieldId: city.fieldId, value: { kind: 'TEXT', text } });
    const reader = (name: string, o: { city?: string; topic?: boolean; status?: string } = {}) => ({
      email: `${name}@rules.test`,
      firstName: name,
      ...(o.status ? { subscriberStatus: o.status } : {}),
      ...(o.city ? { fields: [cityIs(o.city)] } : {}),
      ...(o.topic === false ? {} : { topicIds: [topicId] }),
    });
    await addReaders(a, [
      reader('ann', { city: 'Berlin' }),
      reader('bob', { city: 'Paris' }),
      reader('cid'),
      reader('dan', { city: 'Berlin', topic: false }),
      reader('eve', { city: 'Berlin' }),
      reader('fay', { city: 'Berlin', status: 'UNSUBSCRIBED' }),
      reader('gus', { city: 'Berlin', status: 'BLOCKED' }),
      reader('hal', { city: 'Berlin' }),
      reader('ivy', { city: 'Berlin' }),
    ]);
    const eve = expectStatus(await a.get('/subscribers/by-email/eve@rules.test'), 200);
    expectStatus(await a.post(`/subscribers/${eve.id}/topics/${topicId}/opt-out`, {}), 200);
    expectStatus(await a.post('/suppressions', { email: 'hal@rules.test' }), 201);
    segmentId = await segmentOf(a, 'Berliners', [{ subjectType: 'FIELD', fieldRef: { type: 'CUSTOM', fieldId: city.fieldId }, operator: 'TEXT_EQUALS', operand: { kind: 'TEXT', text: 'Berlin' } }]);
    await projected(a, segmentId, 7);
  });

  it('creates a DRAFT, refuses bad bodies and unknown ids with precise errors', async () => {
    const body = { name: 'Spring', templateName: 'spring', segmentId, topicId };
    const created = expectStatus(await a.post('/broadcasts', body), 201);
    expect(schemaErrors('Broadcast', created)).toEqual([]);
    expect(created).toMatchObject({ ...body, id: expect.stringMatching(UUID_PATTERN), status: 'DRAFT', subject: null, abTest: null, sendWindow: null, variants: [], resendOf: null, sendAt: null });
    expect(created.reconciliation).toMatchObject({ audience: 0, recipients: 0, pending: 0 });
    broadcastId = created.id;
    const ab = { subjects: ['A', 'B'], testPercent: 20, decideAfterMinutes: 15, metric: 'HUMAN_OPENS' };
    expectError(await a.post('/broadcasts', { ...body, subject: 'x', abTest: ab }), 400, 'validation_failed');
    expectError(await a.post('/broadcasts', { ...body, abTest: { ...ab, testPercent: 60 } }), 400, 'validation_failed');
    expectError(await a.post('/broadcasts', { ...body, subject: '{% if %}' }), 400, 'validation_failed');
    expectError(await a.post('/broadcasts', { ...body, sendWindow: { startHour: 9, endHour: 9, defaultTimeZone: 'Europe/Berlin' } }), 400, 'validation_failed');
    expectError(await a.post('/broadcasts', { ...body, sendWindow: { startHour: 9, endHour: 17, defaultTimeZone: 'Mars/Olympus' } }), 400, 'validation_failed');
    expectError(await a.post('/broadcasts', { ...body, sendWindow: { startHour: 9, endHour: 17, timeZoneField: 'nope', defaultTimeZone: 'UTC' } }), 400, 'validation_failed');
    expectError(await a.post('/broadcasts', { ...body, templateName: 'nope' }), 404, 'template_not_found');
    expectError(await a.post('/broadcasts', { ...body, segmentId: UNKNOWN_ID }), 404, 'segment_not_found');
    expectError(await a.post('/broadcasts', { ...body, topicId: UNKNOWN_ID }), 404, 'topic_not_found');
    expectError(await a.post('/broadcasts', { ...body, senderProfileId: UNKNOWN_ID }), 404, 'sender_profile_not_found');
    expectError(await a.get(`/broadcasts/${UNKNOWN_ID}`), 404, 'broadcast_not_found');
    const other = await s.env.account('rules-other');
    expectError(await other.get(`/broadcasts/${broadcastId}`), 404, 'broadcast_not_found');
    expect(expectStatus(await a.put(`/broadcasts/${broadcastId}`, { ...body, name: 'Spring 2' }), 200)).toMatchObject({ name: 'Spring 2', status: 'DRAFT' });
  });

  it('test sends: the first variant with "[Test] ", to those addresses only, suppressions applied, counted nowhere', async () => {
    const { messageIds } = expectStatus(await a.post(`/broadcasts/${broadcastId}/test`, { emails: ['editor@rules-test.test', 'ann@rules.test', 'hal@rules.test'] }), 202);
    expect(messageIds).toHaveLength(3);
    const [editor, ann] = await s.relay.waitFor(() => mailsTo('@rules-test.test').length === 1 && s.relay.receivedFor('ann@rules.test').length === 1).then(() => [mailsTo('@rules-test.test')[0], s.relay.receivedFor('ann@rules.test')[0]]);
    expect(editor.subject).toBe('[Test] Spring for you');
    expect(ann.subject).toBe('[Test] Spring for ann');
    expect(expectStatus(await a.get(`/email-messages/${messageIds[2]}`), 200)).toMatchObject({ status: 'SUPPRESSED', kind: 'BROADCAST', broadcastId });
    expect(expectStatus(await a.get(`/email-messages/${messageIds[0]}`), 200)).toMatchObject({ kind: 'BROADCAST', broadcastId, templateName: 'spring' });
    expectError(await a.post(`/broadcasts/${broadcastId}/test`, { emails: ['not an address'] }), 400, 'invalid_email');
    expectError(await a.post(`/broadcasts/${broadcastId}/test`, { emails: [] }), 400, 'validation_failed');
    expect((await getBroadcast(a, broadcastId)).reconciliation.audience).toBe(0);
    s.relay.clear();
  });

  it('sends to ACTIVE readers of the topic in the segment, not suppressed; every other reader under its reason; the counts add up', async () => {
    expectError(await a.post(`/broadcasts/${broadcastId}/resend-to-non-openers`, {}), 409, 'broadcast_not_sent');
    const scheduled = expectStatus(await a.post(`/broadcasts/${broadcastId}/schedule`, {}), 200);
    expect(['SENDING', 'SENT']).toContain(scheduled.status);
    const b = await broadcastWhen(a, broadcastId, (x) => x.status === 'SENT' && x.reconciliation.delivered === 2);
    expect(b.reconciliation).toEqual({
      audience: 9,
      excluded: { NOT_ACTIVE: 2, NOT_IN_TOPIC: 1, OPTED_OUT: 1, NOT_IN_SEGMENT: 1, SEGMENT_UNKNOWN: 1, SUPPRESSED: 1 },
      recipients: 2, pending: 0, sent: 0, delivered: 2, deferred: 0, failed: 0, bounced: 0, suppressed: 0,
    });
    expect(b).toMatchObject({ startedAt: expect.any(String), finishedAt: expect.any(String), lastError: null });
    const readers = await recipientsOf(a, broadcastId);
    const byName = Object.fromEntries(readers.map((r) => [r.email.split('@')[0], [r.status, r.reason]]));
    expect(byName).toEqual({
      ann: ['DELIVERED', null], ivy: ['DELIVERED', null], bob: ['EXCLUDED', 'NOT_IN_SEGMENT'], cid: ['EXCLUDED', 'SEGMENT_UNKNOWN'], dan: ['EXCLUDED', 'NOT_IN_TOPIC'],
      eve: ['EXCLUDED', 'OPTED_OUT'], fay: ['EXCLUDED', 'NOT_ACTIVE'], gus: ['EXCLUDED', 'NOT_ACTIVE'], hal: ['EXCLUDED', 'SUPPRESSED'],
    });
    expect((await recipientsOf(a, broadcastId, '&status=EXCLUDED')).length).toBe(7);
    expect((await recipientsOf(a, broadcastId, '&status=DELIVERED')).map((r) => r.email).sort()).toEqual(['ann@rules.test', 'ivy@rules.test']);
    // The mail: once per recipient, marketing mail with the unsubscribe headers and footer.
    await s.relay.waitFor(() => mailsTo('@rules.test').length >= 2);
    expect(mailsTo('@rules.test').map((m) => m.rcptTo[0]).sort()).toEqual(['ann@rules.test', 'ivy@rules.test']);
    const ann = s.relay.receivedFor('ann@rules.test')[0];
    expect(ann.subject).toBe('Spring for ann');
    expect(ann.headers['list-unsubscribe']).toMatch(/^<https:\/\/mail\.rss\.test\/u\/[^>]+>$/);
    expect(ann.headers['list-unsubscribe-post']).toBe('List-Unsubscribe=One-Click');
    expect(ann.html).toContain(ann.headers['list-unsubscribe'].slice(1, -1));
    const annRow = readers.find((r) => r.email === 'ann@rules.test')!;
    expect(expectStatus(await a.get(`/email-messages/${annRow.messageId}`), 200)).toMatchObject({ kind: 'BROADCAST', broadcastId, status: 'DELIVERED' });
    expect(await lastFact(s.env, 'broadcast.sent')).toEqual({ type: 'broadcast.sent', accountId: a.accountId, occurredAt: b.finishedAt, broadcastId, recipientCount: 2 });
    // A sent broadcast is final.
    expectError(await a.put(`/broadcasts/${broadcastId}`, { name: 'x', templateName: 'spring' }), 409, 'broadcast_not_editable');
    expectError(await a.delete(`/broadcasts/${broadcastId}`), 409, 'broadcast_not_editable');
    expectError(await a.post(`/broadcasts/${broadcastId}/cancel`), 409, 'broadcast_not_cancellable');
    expectError(await a.post(`/broadcasts/${broadcastId}/schedule`, {}), 409, 'broadcast_not_draft');
  });

  it('resends to the recipients no human opened: a machine open does not count as opened', async () => {
    const [ann, ivy] = ['ann@rules.test', 'ivy@rules.test'].map((e) => trackingLinks(s.relay.receivedFor(e)[0], s.env.gw.url));
    await sleep(2_100); // opens within 2 s of delivery are a machine's
    expect((await fetch(ann.open, { headers: { 'user-agent': BROWSER } })).status).toBe(200);
    expect((await fetch(ivy.open, { headers: { 'user-agent': SCANNER } })).status).toBe(200);
    const resend = expectStatus(await a.post(`/broadcasts/${broadcastId}/resend-to-non-openers`, { subject: 'Missed it, {{ subscriber.firstName }}?' }), 201);
    expect(resend).toMatchObject({ status: 'DRAFT', resendOf: broadcastId, templateName: 'spring', segmentId, topicId, subject: 'Missed it, {{ subscriber.firstName }}?' });
    s.relay.clear();
    expectStatus(await a.post(`/broadcasts/${resend.id}/schedule`, {}), 200);
    const done = await broadcastWhen(a, resend.id, (x) => x.status === 'SENT' && x.reconciliation.delivered === 1);
    expect(done.reconciliation).toMatchObject({ audience: 1, recipients: 1, delivered: 1 });
    await s.relay.waitFor(() => mailsTo('@rules.test').length >= 1);
    await s.env.settled(); // nothing more on its way: only ivy, once
    expect(mailsTo('@rules.test').map((m) => [m.rcptTo[0], m.subject])).toEqual([['ivy@rules.test', 'Missed it, ivy?']]);
  });
});

describe('A/B subjects', () => {
  it('decides by human clicks per delivered mail: a scanner clicking every link of the other variant does not win; the rest get the winner', async () => {
    const { a } = await broadcastAccount(s.env, 'ab');
    const total = 60;
    await addReaders(a, Array.from({ length: total }, (_, i) => ({ email: `r${String(i).padStart(2, '0')}@ab.test`, firstName: `R${i}` })));
    const b = expectStatus(
      await a.post('/broadcasts', { name: 'AB', templateName: 'spring', abTest: { subjects: ['Subject A', 'Subject B'], testPercent: 50, decideAfterMinutes: 15, metric: 'HUMAN_CLICKS' } }),
      201,
    );
    expectStatus(await a.post(`/broadcasts/${b.id}/schedule`, {}), 200);
    const testGroup = await broadcastWhen(a, b.id, (x) => x.reconciliation.audience === total && x.reconciliation.delivered === x.variants[0].recipients + x.variants[1].recipients);
    const [v0, v1] = testGroup.variants;
    expect(v0.recipients).toBeGreaterThan(0);
    expect(v1.recipients).toBeGreaterThan(0);
    expect(testGroup.status).toBe('SENDING');
    expect(testGroup.reconciliation.pending).toBe(total - v0.recipients - v1.recipients);
    // The split is the recipients list's, and each variant's mail has its subject.
    const readers = await recipientsOf(a, b.id);
    expect(readers.filter((r) => r.variant === 0).length).toBe(v0.recipients);
    await s.relay.waitFor(() => mailsTo('@ab.test').length === v0.recipients + v1.recipients);
    const bySubject = (subject: string) => mailsTo('@ab.test').filter((m) => m.subject === subject);
    expect(bySubject('Subject A').length).toBe(v0.recipients);
    await sleep(2_100);
    // A link scanner follows every link of every variant-0 mail, several times, and probes with HEAD.
    for (const mail of bySubject('Subject A')) {
      for (const url of trackingLinks(mail, s.env.gw.url).clicks) {
        for (let i = 0; i < 3; i++) expect((await fetch(url, { redirect: 'manual', headers: { 'user-agent': SCANNER } })).status).toBe(302);
        expect((await fetch(url, { method: 'HEAD', redirect: 'manual', headers: { 'user-agent': BROWSER } })).status).toBe(302);
      }
    }
    // One person clicks in one variant-1 mail.
    const human = bySubject('Subject B')[0];
    expect((await fetch(trackingLinks(human, s.env.gw.url).clicks[0], { redirect: 'manual', headers: { 'user-agent': BROWSER } })).status).toBe(302);
    const decided = await broadcastWhen(a, b.id, (x) => x.status === 'SENT' && x.reconciliation.delivered === total, 90_000);
    expect(decided.variants.map((v: { humanClicks: number; winner: boolean }) => [v.humanClicks, v.winner])).toEqual([[0, false], [1, true]]);
    expect(decided.variants[1].humanOpens).toBe(1); // the click proves the open
    await s.relay.waitFor(() => mailsTo('@ab.test').length === total);
    expect(bySubject('Subject B').length).toBe(total - v0.recipients);
    expect(new Set(mailsTo('@ab.test').map((m) => m.rcptTo[0])).size).toBe(total);
    const aMail = (await recipientsOf(a, b.id, '&variant=0'))[0];
    expect(expectStatus(await a.get(`/email-messages/${aMail.messageId}`), 200).clickCount).toBe(0);
  });
});

describe('send windows in the reader\'s zone', () => {
  it('mails a reader inside the window now; a reader outside (own zone, or the default for a zone that is not one) waits PENDING; cancel removes the waiting', async () => {
    const { a } = await broadcastAccount(s.env, 'window');
    const tz = expectStatus(await a.post('/fields', { label: 'Time zone', fieldType: 'TEXT', personalizationTagName: 'tz' }), 201);
    // Fixed-offset zones chosen so that now is 12:xx for `inside` and 00:xx for the others (Etc/GMT signs are inverted).
    const hour = new Date().getUTCHours();
    const etc = (localHour: number) => {
      const offset = ((localHour - hour + 36) % 24) - 12; // -12..11
      return offset === 0 ? 'Etc/GMT' : `Etc/GMT${offset > 0 ? '-' : '+'}${Math.abs(offset)}`;
    };
    const withZone = (name: string, zone: string) => ({ email: `${name}@window.test`, fields: [{ fieldId: tz.fieldId, value: { kind: 'TEXT', text: zone } }] });
    await addReaders(a, [withZone('inside', etc(12)), withZone('outside', etc(0)), withZone('nozone', 'not/a-zone')]);
    const b = expectStatus(await a.post('/broadcasts', { name: 'Windowed', templateName: 'spring', sendWindow: { startHour: 9, endHour: 15, timeZoneField: 'tz', defaultTimeZone: etc(0) } }), 201);
    expectStatus(await a.post(`/broadcasts/${b.id}/schedule`, {}), 200);
    const sending = await broadcastWhen(a, b.id, (x) => x.reconciliation.audience === 3 && x.reconciliation.delivered === 1);
    expect(sending).toMatchObject({ status: 'SENDING', reconciliation: { recipients: 3, pending: 2, delivered: 1 } });
    const readers = Object.fromEntries((await recipientsOf(a, b.id)).map((r) => [r.email.split('@')[0], [r.status, r.messageId === null]]));
    expect(readers).toEqual({ inside: ['DELIVERED', false], outside: ['PENDING', true], nozone: ['PENDING', true] });
    expect(mailsTo('@window.test').map((m) => m.rcptTo[0])).toEqual(['inside@window.test']);
    expect(expectStatus(await a.post(`/broadcasts/${b.id}/cancel`), 200).status).toBe('CANCELLED');
    const cancelled = await broadcastWhen(a, b.id, (x) => x.reconciliation.pending === 0);
    expect(cancelled.reconciliation).toMatchObject({ audience: 1, recipients: 1, delivered: 1, pending: 0 });
    expect(mailsTo('@window.test')).toHaveLength(1);
  });
});

describe('scheduling, guards and failures', () => {
  it('a SCHEDULED broadcast protects its template, sender profile, segment and topic; a cancelled one no longer does', async () => {
    const { a, topicId, profileId } = await broadcastAccount(s.env, 'guards');
    const segmentId = await segmentOf(a, 'All', [{ subjectType: 'FIELD', fieldRef: { type: 'BUILT_IN', builtInField: 'EMAIL' }, operator: 'TEXT_ENDS_WITH', operand: { kind: 'TEXT', text: '.test' } }]);
    const b = expectStatus(await a.post('/broadcasts', { name: 'Later', templateName: 'spring', senderProfileId: profileId, segmentId, topicId }), 201);
    const sendAt = new Date(Date.now() + 3_600_000).toISOString();
    const scheduled = expectStatus(await a.post(`/broadcasts/${b.id}/schedule`, { sendAt }), 200);
    expect(scheduled).toMatchObject({ status: 'SCHEDULED', sendAt });
    expectError(await a.delete('/email-templates/spring'), 409, 'template_in_use');
    expectError(await a.delete(`/sender-profiles/${profileId}`), 409, 'sender_profile_in_use');
    expectError(await a.delete(`/segments/${segmentId}`), 409, 'segment_in_use');
    expectError(await a.delete(`/topics/${topicId}`), 409, 'topic_in_use');
    expect(expectStatus(await a.put(`/broadcasts/${b.id}`, { name: 'Later still', templateName: 'spring', senderProfileId: profileId, segmentId, topicId }), 200)).toMatchObject({ status: 'SCHEDULED', sendAt });
    expectStatus(await a.post(`/broadcasts/${b.id}/cancel`), 200);
    expectStatus(await a.delete(`/segments/${segmentId}`), 204);
    expectStatus(await a.delete(`/topics/${topicId}`), 204);
    expectStatus(await a.delete('/email-templates/spring'), 204);
  });

  it('FAILED with lastError after bounded retries when no reader\'s mail can be rendered', async () => {
    const { a } = await broadcastAccount(s.env, 'failing');
    // Saved (its test render at save has no reader of this account); every reader's render passes the limit.
    expectStatus(await a.post('/email-templates', { name: 'hostile', subject: 's', html: '{% if subscriber.email contains "@failing.test" %}{% for i in (1..100000000) %}xxxxxxxxxxxxxxxx{% endfor %}{% endif %}' }), 201);
    await addReaders(a, [{ email: 'one@failing.test' }, { email: 'two@failing.test' }]);
    const b = expectStatus(await a.post('/broadcasts', { name: 'Broken', templateName: 'hostile' }), 201);
    expectStatus(await a.post(`/broadcasts/${b.id}/schedule`, {}), 200);
    const failed = await broadcastWhen(a, b.id, (x) => x.status === 'FAILED', 60_000);
    expect(failed.lastError).toMatch(/^template_render_failed: /);
    expect(failed.reconciliation).toMatchObject({ audience: 0, recipients: 0 });
    expect(mailsTo('@failing.test')).toEqual([]);
  });

  it('a broadcast that falls due while messaging is down starts within seconds of its restart', async () => {
    const { a } = await broadcastAccount(s.env, 'restart');
    await addReaders(a, [{ email: 'one@restart.test' }]);
    const b = expectStatus(await a.post('/broadcasts', { name: 'Morning', templateName: 'spring' }), 201);
    const sendAt = new Date(Date.now() + 2_000);
    expectStatus(await a.post(`/broadcasts/${b.id}/schedule`, { sendAt: sendAt.toISOString() }), 200);
    await s.env.restartMessaging({ kill9: true, downMs: 4_000 });
    const restartedAt = Date.now();
    const started = await broadcastWhen(a, b.id, (x) => x.startedAt !== null, 30_000);
    expect(new Date(started.startedAt).getTime()).toBeGreaterThanOrEqual(restartedAt - 1_000);
    expect(new Date(started.startedAt).getTime() - restartedAt).toBeLessThan(5_000);
    await broadcastWhen(a, b.id, (x) => x.status === 'SENT' && x.reconciliation.delivered === 1);
  });
});
