// The outbox gauge is counted at scrape time: a failing count must not fail the whole scrape.
import { Registry } from 'prom-client';
import { exportOutboxMetrics } from '../src/backlog-metrics';

it('a failed outbox count keeps the last value and the rest of /metrics', async () => {
  const registry = new Registry();
  let pending: () => Promise<number> = async () => 7;
  exportOutboxMetrics(registry, { pending: () => pending() });
  expect(await registry.metrics()).toContain('outbox_pending_events 7');
  pending = async () => {
    throw new Error('store unreachable');
  };
  expect(await registry.metrics()).toContain('outbox_pending_events 7');
});
