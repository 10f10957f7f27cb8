// Subscriptions written straight to the webhook service's store (before it starts), sealed under
// SECRET_SEALING_KEY (start the service with `sealingEnv`), and subscriber facts as the subscriber
// service publishes them.
import { randomBytes, randomUUID } from 'node:crypto';
import path from 'node:path';
import { domainFact } from '@mailer/nats/facts';
import { openStore } from '@mailer/store';
import { newSecret, type Subscription } from '../../src/domain/subscription';
import { secretKeyring, subscriptionRepository } from '../../src/store/subscriptions';

/** The sealing key the seeded secrets are sealed under: pass it to the service. */
export const sealingEnv = { SECRET_SEALING_KEY: randomBytes(32).toString('base64') };
const keyring = secretKeyring(Buffer.from(sealingEnv.SECRET_SEALING_KEY, 'base64'));

export function subscription(accountId: string, targetUrl: string, overrides: Partial<Subscription> = {}): Subscription {
  const now = new Date();
  return {
    id: randomUUID(),
    accountId,
    targetUrl,
    event: '*',
    deliveryContentType: 'application/json',
    active: true,
    secret: newSecret(),
    previousSecret: null,
    previousSecretExpiresAt: null,
    disabledReason: null,
    createdAt: now,
    updatedAt: now,
    failingSince: null,
    ...overrides,
  };
}

export async function seedSubscriptions(dataDir: string, subs: Subscription[]): Promise<void> {
  const store = await openStore({ dataDir: path.join(dataDir, 'webhook') });
  const repo = subscriptionRepository(store, keyring);
  for (const s of subs) await repo.create(s);
  await store.close();
}

export async function readSubscription(dataDir: string, accountId: string, id: string): Promise<Subscription | null> {
  const store = await openStore({ dataDir: path.join(dataDir, 'webhook') });
  try {
    return await subscriptionRepository(store, keyring).get(accountId, id);
  } finally {
    await store.close();
  }
}

export function subscriberCreated(accountId: string, email = `${randomUUID()}@example.org`) {
  return domainFact({
    type: 'subscriber.created',
    accountId,
    occurredAt: new Date().toISOString(),
    version: 1,
    subscriber: {
      id: randomUUID(),
      email,
      firstName: 'Ann',
      subscriberStatus: 'ACTIVE',
      registeredAt: new Date().toISOString(),
      tags: [],
      topicIds: [],
      optOuts: [],
      fields: [],
    },
  });
}
