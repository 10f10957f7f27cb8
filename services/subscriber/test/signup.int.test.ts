// SignupService (Signup, ConfirmSubscriber) on the real subscriber service: every outcome of a form
// signup, what an existing address keeps, the subscriber limit, redelivery safety, bad input, and
// the double opt-in confirmation with its subscriber.confirmed fact.
import { createClient } from '@mailer/kit';
import { signupV1, subscriberV1 } from '@mailer/proto';
import { add, addField, addTopic, errorOf, eventsOf, fieldId, FT, newAccount, S, startSubscriberStack, type DomainEventJson, type SubscriberStack, text } from '@mailer/testing/subscriber';

const OUT = signupV1.SignupOutcome;
let env: SubscriberStack;
let signups: ReturnType<typeof createClient<signupV1.SignupServiceClient>>;
beforeAll(async () => {
  env = await startSubscriberStack();
  signups = createClient(signupV1.SignupServiceClient, env.svc.address, 20_000);
});
afterAll(async () => {
  signups?.close();
  await env?.stop();
});

function signup(accountId: string, email: string, extra: Partial<signupV1.SignupRequest> = {}) {
  return signups.signup({ accountId, email, valuesJson: '{}', topicIds: [], doubleOptIn: true, consentText: 'Yes, send me news', formId: 'f-1', subscriberLimit: '0', consentGivenAt: '', eventId: '', ...extra });
}
const get = (accountId: string, subscriberId: string) => env.client.getSubscriber({ accountId, subscriberId }).then((r) => r.subscriber!);
const topicsOf = async (accountId: string, subscriberId: string) =>
  (await env.client.getSubscriberTopics({ accountId, subscriberId })).topics.filter((t) => t.subscribed).map((t) => t.topicId).sort();
/** Custom field values as displayed (the built-in email left out). */
const display = (s: subscriberV1.Subscriber) => Object.fromEntries(s.values.filter((v) => v.personalizationTagName !== 'email').map((v) => [v.personalizationTagName, v.displayValue]));

/** The account's events once a marker subscriber (created last) is on the stream: nothing written before it is still missing. */
async function settledEvents(accountId: string): Promise<DomainEventJson[]> {
  const marker = await add(env.client, accountId, `marker-${Date.now()}@example.org`);
  const all = await eventsOf(env.nc, accountId, (es) => es.some((e) => e.type === 'subscriber.created' && e.subscriber?.id === marker.id));
  return all.filter((e) => e.subscriber?.id !== marker.id);
}

it('a new address with double opt-in: CREATED, UNCONFIRMED, values, topics and consent recorded, one subscriber.created even when called again', async () => {
  const a = newAccount();
  await addField(env.client, a, 'Company', FT.FIELD_TYPE_TEXT);
  await addField(env.client, a, 'Age', FT.FIELD_TYPE_NUMBER);
  const news = await addTopic(env.client, a, 'News');
  const req = { valuesJson: JSON.stringify({ email: 'ann@example.org', first_name: 'Ann', company: 'ACME', age: 42 }), topicIds: [news.id], consentText: 'I agree to the newsletter', formId: 'form-9' };
  const first = await signup(a, ' Ann@Example.org', req);
  expect(first).toMatchObject({ outcome: OUT.SIGNUP_OUTCOME_CREATED, status: S.SUBSCRIBER_STATUS_UNCONFIRMED, previousStatus: S.SUBSCRIBER_STATUS_UNSPECIFIED });
  const s = await get(a, first.subscriberId);
  expect(s).toMatchObject({ email: 'ann@example.org', firstName: 'Ann', subscriberStatus: S.SUBSCRIBER_STATUS_UNCONFIRMED, gdprAgreement: 'I agree to the newsletter' });
  expect(display(s)).toEqual({ first_name: 'Ann', company: 'ACME', age: '42' });
  expect(await topicsOf(a, s.id)).toEqual([news.id]);

  // a redelivered job calls again: the same subscriber, nothing new
  const again = await signup(a, 'ann@example.org', req);
  expect(again).toEqual({ outcome: OUT.SIGNUP_OUTCOME_EXISTING, subscriberId: first.subscriberId, status: S.SUBSCRIBER_STATUS_UNCONFIRMED, previousStatus: S.SUBSCRIBER_STATUS_UNCONFIRMED });
  const events = (await settledEvents(a)).filter((e) => e.type.startsWith('subscriber.'));
  expect(events.map((e) => e.type)).toEqual(['subscriber.created']);
  expect(events[0].subscriber).toMatchObject({ id: s.id, subscriberStatus: 'UNCONFIRMED', topicIds: [news.id] });
});

it("a form's choices come as the options' labels: stored as option ids, shown as labels; a label no active option has is left out", async () => {
  const a = newAccount();
  const plan = await addField(env.client, a, 'Plan', FT.FIELD_TYPE_SINGLE_CHOICE, { options: ['Free', 'Pro', 'Old'], personalizationTagName: 'plan' });
  const likes = await addField(env.client, a, 'Likes', FT.FIELD_TYPE_MULTI_CHOICE, { options: ['Books', 'Films', 'Games'], personalizationTagName: 'likes' });
  // 'Old' deactivated (a reader may have picked it just before)
  const [free, pro] = plan.options;
  await env.client.updateField({ accountId: a, fieldId: fieldId(plan), optionsGiven: true, options: [free, pro] });
  const created = await signup(a, 'choices@example.org', { valuesJson: JSON.stringify({ plan: 'Pro', likes: ['Games', 'Books'] }) });
  const s = await get(a, created.subscriberId);
  expect(display(s)).toEqual({ plan: 'Pro', likes: expect.stringMatching(/^(Books, Games|Games, Books)$/) });
  const stored = (await env.client.getSubscriberData({ accountId: a, subscriberId: s.id })).data!;
  expect(JSON.stringify(stored)).toContain(pro.id);
  expect(JSON.stringify(stored)).toContain(likes.options[0].id);

  const stale = await signup(a, 'stale@example.org', { valuesJson: JSON.stringify({ plan: 'Old', likes: ['Films', 'Gone'] }) });
  expect(stale.outcome).toBe(OUT.SIGNUP_OUTCOME_CREATED);
  expect(display(await get(a, stale.subscriberId))).toEqual({ likes: 'Films' });
});

it("a custom event's consent (no form): the consent's source and givenAt are the gdprAgreement; a bad givenAt or event id is refused", async () => {
  const a = newAccount();
  const eventId = '0190a4a0-0000-7000-8000-0000000000e1';
  const r = await signup(a, 'cy@example.org', { consentText: 'https://shop.test/checkout', consentGivenAt: '2026-03-01T10:00:00Z', eventId, formId: '' });
  expect(r).toMatchObject({ outcome: OUT.SIGNUP_OUTCOME_CREATED, status: S.SUBSCRIBER_STATUS_UNCONFIRMED });
  expect(await get(a, r.subscriberId)).toMatchObject({ subscriberStatus: S.SUBSCRIBER_STATUS_UNCONFIRMED, gdprAgreement: 'https://shop.test/checkout (given 2026-03-01T10:00:00.000Z)' });
  expect(await errorOf(signup(a, 'dy@example.org', { consentGivenAt: 'yesterday', eventId, formId: '' }))).toMatchObject({ code: 3, errorId: 'validation_failed' });
  expect(await errorOf(signup(a, 'dy@example.org', { consentGivenAt: '2026-03-01T10:00:00Z', eventId: 'e-1', formId: '' }))).toMatchObject({ code: 3, errorId: 'invalid_uuid' });
  expect((await env.client.getSubscriberByEmail({ accountId: a, email: 'dy@example.org' }).catch((e) => e)).code).toBe(5);
});

it('a new address with single opt-in: CREATED and ACTIVE; without topics it joins the default topic', async () => {
  const a = newAccount();
  const r = await signup(a, 'bob@example.org', { doubleOptIn: false });
  expect(r).toMatchObject({ outcome: OUT.SIGNUP_OUTCOME_CREATED, status: S.SUBSCRIBER_STATUS_ACTIVE });
  expect((await get(a, r.subscriberId)).subscriberStatus).toBe(S.SUBSCRIBER_STATUS_ACTIVE);
  const topics = (await env.client.listTopics({ accountId: a })).items;
  expect(await topicsOf(a, r.subscriberId)).toEqual(topics.filter((t) => t.isDefault).map((t) => t.id));
});

it('an existing ACTIVE or UNCONFIRMED address: EXISTING, the form topics added, values never overwritten nor added', async () => {
  const a = newAccount();
  await addField(env.client, a, 'Company', FT.FIELD_TYPE_TEXT);
  await addField(env.client, a, 'City', FT.FIELD_TYPE_TEXT);
  const [news, deals] = [await addTopic(env.client, a, 'News'), await addTopic(env.client, a, 'Deals')];
  for (const status of [S.SUBSCRIBER_STATUS_ACTIVE, S.SUBSCRIBER_STATUS_UNCONFIRMED]) {
    const email = `owner-${status}@example.org`;
    const s = await add(env.client, a, email, { subscriberStatus: status, topicIds: [news.id], topicIdsGiven: true, fields: [{ fieldId: (await env.client.listFields({ accountId: a })).fields.find((f) => f.personalizationTagName === 'company')!.ref!.ref!.value, value: text('ACME') }] });
    const r = await signup(a, email, { valuesJson: JSON.stringify({ first_name: 'Mallory', company: 'Stranger Inc', city: 'Nowhere' }), topicIds: [deals.id], doubleOptIn: false });
    expect(r).toEqual({ outcome: OUT.SIGNUP_OUTCOME_EXISTING, subscriberId: s.id, status, previousStatus: status });
    const after = await get(a, s.id);
    expect(display(after)).toEqual({ company: 'ACME' });
    expect(after.subscriberStatus).toBe(status);
    expect(after.firstName).toBeUndefined();
    expect(after.gdprAgreement).toBeUndefined();
    expect(await topicsOf(a, s.id)).toEqual([news.id, deals.id].sort());
  }
});

it('an existing UNSUBSCRIBED, BOUNCED, COMPLAINED or BLOCKED address: EXISTING and nothing changes, no fact', async () => {
  const a = newAccount();
  const [news, deals] = [await addTopic(env.client, a, 'News'), await addTopic(env.client, a, 'Deals')];
  const cases: Array<[string, number]> = [
    ['u@example.org', S.SUBSCRIBER_STATUS_UNSUBSCRIBED],
    ['b@example.org', S.SUBSCRIBER_STATUS_BOUNCED],
    ['c@example.org', S.SUBSCRIBER_STATUS_COMPLAINED],
    ['x@example.org', S.SUBSCRIBER_STATUS_BLOCKED],
  ];
  const ids: string[] = [];
  for (const [email, status] of cases) {
    const manual = status === S.SUBSCRIBER_STATUS_UNSUBSCRIBED || status === S.SUBSCRIBER_STATUS_BLOCKED;
    const s = await add(env.client, a, email, { subscriberStatus: manual ? status : S.SUBSCRIBER_STATUS_ACTIVE, topicIds: [news.id], topicIdsGiven: true });
    if (!manual) await env.client.setDeliveryStatus({ accountId: a, email, subscriberStatus: status });
    ids.push(s.id);
  }
  const before = await settledEvents(a);
  for (const [i, [email, status]] of cases.entries()) {
    const r = await signup(a, email, { topicIds: [deals.id], doubleOptIn: false });
    expect(r).toEqual({ outcome: OUT.SIGNUP_OUTCOME_EXISTING, subscriberId: ids[i], status, previousStatus: status });
    expect((await get(a, ids[i])).subscriberStatus).toBe(status);
    expect(await topicsOf(a, ids[i])).toEqual([news.id]);
  }
  const after = await settledEvents(a);
  expect(after.filter((e) => ids.includes(e.subscriber?.id)).length).toBe(before.filter((e) => ids.includes(e.subscriber?.id)).length);
});

it('LIMIT_REACHED when creating would exceed subscriber_limit; an existing address is still EXISTING', async () => {
  const a = newAccount();
  await signup(a, 'one@example.org', { subscriberLimit: '2' });
  expect((await signup(a, 'two@example.org', { subscriberLimit: '2' })).outcome).toBe(OUT.SIGNUP_OUTCOME_CREATED);
  expect(await signup(a, 'three@example.org', { subscriberLimit: '2' })).toEqual({
    outcome: OUT.SIGNUP_OUTCOME_LIMIT_REACHED,
    subscriberId: '',
    status: S.SUBSCRIBER_STATUS_UNSPECIFIED,
    previousStatus: S.SUBSCRIBER_STATUS_UNSPECIFIED,
  });
  expect((await env.client.getSubscriberByEmail({ accountId: a, email: 'three@example.org' }).catch((e) => e)).code).toBe(5);
  expect((await signup(a, 'one@example.org', { subscriberLimit: '2' })).outcome).toBe(OUT.SIGNUP_OUTCOME_EXISTING);
  expect((await signup(a, 'three@example.org', { subscriberLimit: '0' })).outcome).toBe(OUT.SIGNUP_OUTCOME_CREATED);
});

it('bad input is refused with the precise errorId and creates nothing', async () => {
  const a = newAccount();
  await addField(env.client, a, 'Age', FT.FIELD_TYPE_NUMBER);
  expect(await errorOf(signup(a, 'not an address'))).toMatchObject({ code: 3, errorId: 'invalid_email' });
  expect(await errorOf(signup(a, 'd@example.org', { topicIds: ['0190a4a0-0000-7000-8000-000000000000'] }))).toMatchObject({ code: 5, errorId: 'topic_not_found' });
  expect(await errorOf(signup(a, 'd@example.org', { valuesJson: JSON.stringify({ shoeSize: 44 }) }))).toMatchObject({
    code: 3,
    errorId: 'validation_failed',
    details: [{ path: 'values.shoeSize', problem: 'unknown field' }],
  });
  expect(await errorOf(signup(a, 'd@example.org', { valuesJson: JSON.stringify({ age: 'forty' }) }))).toMatchObject({ code: 3, errorId: 'validation_failed' });
  expect(await errorOf(signup(a, 'd@example.org', { valuesJson: '[1]' }))).toMatchObject({ code: 3, errorId: 'validation_failed' });
  expect((await env.client.getSubscriberByEmail({ accountId: a, email: 'd@example.org' }).catch((e) => e)).code).toBe(5);
});

it('ConfirmSubscriber: UNCONFIRMED -> ACTIVE with subscriber.confirmed (previousStatus); again: no fact; other statuses unchanged; unknown id not found', async () => {
  const a = newAccount();
  const { subscriberId } = await signup(a, 'eve@example.org');
  const confirm = (id: string) => signups.confirmSubscriber({ accountId: a, subscriberId: id });
  expect(await confirm(subscriberId)).toEqual({ status: S.SUBSCRIBER_STATUS_ACTIVE, previousStatus: S.SUBSCRIBER_STATUS_UNCONFIRMED });
  expect((await get(a, subscriberId)).subscriberStatus).toBe(S.SUBSCRIBER_STATUS_ACTIVE);
  expect(await confirm(subscriberId)).toEqual({ status: S.SUBSCRIBER_STATUS_ACTIVE, previousStatus: S.SUBSCRIBER_STATUS_ACTIVE });
  const gone = await add(env.client, a, 'gone@example.org', { subscriberStatus: S.SUBSCRIBER_STATUS_UNSUBSCRIBED });
  expect(await confirm(gone.id)).toEqual({ status: S.SUBSCRIBER_STATUS_UNSUBSCRIBED, previousStatus: S.SUBSCRIBER_STATUS_UNSUBSCRIBED });
  expect((await get(a, gone.id)).subscriberStatus).toBe(S.SUBSCRIBER_STATUS_UNSUBSCRIBED);
  const events = (await settledEvents(a)).filter((e) => e.subscriber?.id === subscriberId);
  expect(events.map((e) => e.type)).toEqual(['subscriber.created', 'subscriber.updated', 'subscriber.confirmed']);
  expect(events[2]).toMatchObject({ previousStatus: 'UNCONFIRMED', subscriber: { subscriberStatus: 'ACTIVE' } });
  expect(await errorOf(confirm('0190a4a0-0000-7000-8000-000000000001'))).toMatchObject({ code: 5, errorId: 'subscriber_not_found' });
  expect(await errorOf(signups.confirmSubscriber({ accountId: newAccount(), subscriberId }))).toMatchObject({ code: 5, errorId: 'subscriber_not_found' });
});
