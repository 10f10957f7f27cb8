// SetDeliveryStatus (system RPC: the messaging service's bounce and complaint effects) on the real
// subscriber service: only BOUNCED / COMPLAINED, by address, the usual facts, BLOCKED kept, a
// complaint not downgraded by a later bounce, an unknown address no error.
import { addTopic, add, errorOf, eventsOf, newAccount, S, startSubscriberStack, type SubscriberStack } from '@mailer/testing/subscriber';

let env: SubscriberStack;
beforeAll(async () => {
  env = await startSubscriberStack();
});
afterAll(() => env?.stop());

const set = (accountId: string, email: string, subscriberStatus: number, optOutTopicId?: string) =>
  env.client.setDeliveryStatus({ accountId, email, subscriberStatus, optOutTopicId });

it('BOUNCED: status set with the usual subscriber.updated fact; repeating it changes nothing', async () => {
  const account = newAccount();
  const s = await add(env.client, account, 'ann@example.org');
  expect(await set(account, 'Ann@Example.org', S.SUBSCRIBER_STATUS_BOUNCED)).toEqual({ found: true, subscriberStatus: S.SUBSCRIBER_STATUS_BOUNCED });
  expect((await env.client.getSubscriber({ accountId: account, subscriberId: s.id })).subscriber!.subscriberStatus).toBe(S.SUBSCRIBER_STATUS_BOUNCED);
  await set(account, 'ann@example.org', S.SUBSCRIBER_STATUS_BOUNCED);
  const events = await eventsOf(env.nc, account, (e) => e.some((x) => x.type === 'subscriber.updated'));
  expect(events.filter((e) => e.type === 'subscriber.updated').map((e) => (e as { subscriber: { subscriberStatus: string } }).subscriber.subscriberStatus)).toEqual(['BOUNCED']);
});

it('COMPLAINED with a topic: status COMPLAINED and opted out of that topic (source complaint)', async () => {
  const account = newAccount();
  const topic = await addTopic(env.client, account, 'Deals');
  const s = await add(env.client, account, 'cara@example.org', { topicIds: [topic.id], topicIdsGiven: true });
  await set(account, 'cara@example.org', S.SUBSCRIBER_STATUS_COMPLAINED, topic.id);
  const topics = (await env.client.getSubscriberTopics({ accountId: account, subscriberId: s.id })).topics;
  expect(topics.find((t) => t.topicId === topic.id)).toMatchObject({ subscribed: false, optedOut: true, optOutSource: 'complaint' });
  // A later hard bounce does not downgrade the complaint.
  expect((await set(account, 'cara@example.org', S.SUBSCRIBER_STATUS_BOUNCED)).subscriberStatus).toBe(S.SUBSCRIBER_STATUS_COMPLAINED);
});

it('a BLOCKED subscriber stays BLOCKED; an unknown address or another account is found: false', async () => {
  const account = newAccount();
  await add(env.client, account, 'dan@example.org', { subscriberStatus: S.SUBSCRIBER_STATUS_BLOCKED });
  expect((await set(account, 'dan@example.org', S.SUBSCRIBER_STATUS_BOUNCED)).subscriberStatus).toBe(S.SUBSCRIBER_STATUS_BLOCKED);
  expect(await set(account, 'nobody@example.org', S.SUBSCRIBER_STATUS_BOUNCED)).toEqual({ found: false, subscriberStatus: S.SUBSCRIBER_STATUS_UNSPECIFIED });
  expect((await set(newAccount(), 'dan@example.org', S.SUBSCRIBER_STATUS_BOUNCED)).found).toBe(false);
});

it('refuses statuses that are no delivery outcome', async () => {
  const account = newAccount();
  await add(env.client, account, 'eve@example.org');
  for (const status of [S.SUBSCRIBER_STATUS_ACTIVE, S.SUBSCRIBER_STATUS_UNSUBSCRIBED, S.SUBSCRIBER_STATUS_UNSPECIFIED]) {
    expect((await errorOf(set(account, 'eve@example.org', status))).errorId).toBe('validation_failed');
  }
});
