// The delivery worker's view of subscriptions: each one read at most once a second (a backlog of one
// subscription's deliveries otherwise reads the same record for every attempt). What the worker itself
// changes (disable, failing, healthy) drops the entry at once, so a 410 stops this replica's next
// attempt; a customer's change (PUT, rotate-secret) is seen within `ttlMs`.
import type { Subscription } from '../domain/subscription';
import type { SubscriptionRepository } from '../store/subscriptions';

type WorkerView = Pick<SubscriptionRepository, 'get' | 'disable' | 'markFailing' | 'markHealthy'>;

export function cachedSubscriptions(repo: WorkerView, ttlMs: number, now: () => number = Date.now): WorkerView {
  const cache = new Map<string, { at: number; sub: Promise<Subscription | null> }>();
  const key = (accountId: string, id: string) => `${accountId}/${id}`;
  const drop = (accountId: string, id: string) => cache.delete(key(accountId, id));
  return {
    get(accountId, id) {
      const k = key(accountId, id);
      const hit = cache.get(k);
      if (hit && now() - hit.at < ttlMs) return hit.sub;
      const sub = repo.get(accountId, id);
      cache.set(k, { at: now(), sub });
      sub.catch(() => cache.delete(k));
      if (cache.size > 10_000) cache.delete(cache.keys().next().value!);
      return sub;
    },
    async disable(accountId, id, reason, at) {
      drop(accountId, id);
      return repo.disable(accountId, id, reason, at).finally(() => drop(accountId, id));
    },
    async markFailing(accountId, id, at) {
      drop(accountId, id);
      return repo.markFailing(accountId, id, at);
    },
    async markHealthy(accountId, id) {
      drop(accountId, id);
      return repo.markHealthy(accountId, id);
    },
  };
}
