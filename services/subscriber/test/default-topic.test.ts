import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { openStore, type Store } from '@mailer/store';
import { defaultTopicId, ensureDefaultTopic } from '../src/app/default-topic';
import type { Deps } from '../src/app/deps';
import { subscriberDataHandlers } from '../src/handlers/subscriber-data';
import { topicHandlers } from '../src/handlers/topics';
import { catalogRepository, topicSchema } from '../src/store/catalog';
import { outboxRepository } from '@mailer/nats';
import { subscriberRepository } from '../src/store/subscribers';

// The default topic against a real embedded store, in process: created once per account however
// many first uses race, and again when the store it was created in is gone (a new store, or one
// emptied underneath a running process), although the process remembers accounts that have one.

const dirs: string[] = [];
const stores: Store[] = [];
async function open(dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailer-default-topic-'))) {
  dirs.push(dir);
  const store = await openStore({ dataDir: dir });
  stores.push(store);
  const deps: Deps = {
    store,
    subscribers: subscriberRepository(store),
    catalog: catalogRepository(store),
    outbox: outboxRepository(store),
    usage: { ask: async () => [], close: () => undefined }, // field usage is not asked here
    notify: () => undefined,
    maxPendingEvents: 10_000,
  };
  return { dir, store, deps, handlers: topicHandlers(deps) };
}
afterAll(async () => {
  for (const s of stores) await s.close().catch(() => undefined);
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

const A = '11111111-1111-4111-8111-111111111111';
const B = '22222222-2222-4222-8222-222222222222';
const topicsOf = async (h: Awaited<ReturnType<typeof open>>['handlers'], accountId: string) => (await h.listTopics({ accountId }, undefined as never)).items;

it('concurrent first uses create one Newsletter, with one topic.created fact', async () => {
  const env = await open();
  await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 ? ensureDefaultTopic(env.deps, A) : topicsOf(env.handlers, A))));
  const topics = await topicsOf(env.handlers, A);
  expect(topics).toEqual([expect.objectContaining({ id: defaultTopicId(A), label: 'Newsletter', active: true, isDefault: true, subscriberCount: '0' })]);
  expect(await env.deps.outbox.pendingAllAccounts()).toBe(1); // nothing relays in this test: the one topic.created waits in the outbox
  // another account gets its own
  expect((await topicsOf(env.handlers, B)).map((t) => t.id)).toEqual([defaultTopicId(B)]);
  expect(defaultTopicId(A)).not.toBe(defaultTopicId(B));
});

it('a deleted and recreated store gets the default again; so does a store emptied underneath the process', async () => {
  const first = await open();
  expect(await topicsOf(first.handlers, A)).toHaveLength(1);
  await first.store.close();
  fs.rmSync(first.dir, { recursive: true, force: true });
  const second = await open(first.dir);
  expect((await topicsOf(second.handlers, A)).map((t) => [t.label, t.isDefault])).toEqual([['Newsletter', true]]);

  // emptied in place: this process still believes A has its default; the next read notices and heals
  await second.store.collection('topics', topicSchema).deleteMany({ accountId: A });
  expect((await topicsOf(second.handlers, A)).map((t) => [t.label, t.isDefault])).toEqual([['Newsletter', true]]);
});

it('a subscriber-topics request refused for a malformed subscriber id creates no default topic (and emits no fact)', async () => {
  const env = await open();
  const data = subscriberDataHandlers(env.deps);
  await expect(data.getSubscriberTopics({ accountId: A, subscriberId: 'not-a-uuid' }, undefined as never)).rejects.toMatchObject({ errorId: 'invalid_uuid' });
  expect(await env.deps.catalog.listTopics(A)).toEqual([]);
  expect(await env.deps.outbox.pendingAllAccounts()).toBe(0);
  // a well-formed request still creates it on first use
  await expect(data.getSubscriberTopics({ accountId: A, subscriberId: B }, undefined as never)).rejects.toMatchObject({ errorId: 'subscriber_not_found' });
  expect((await env.deps.catalog.listTopics(A)).map((t) => t.id)).toEqual([defaultTopicId(A)]);
});
