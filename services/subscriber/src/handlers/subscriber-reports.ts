// mailer.subscriber.v1.SubscriberReportService: POST /reports/subscribers through the gateway.
import { accountOf, invalid, type AsyncHandlers } from '@mailer/kit';
import type { subscriberReportsV1 } from '@mailer/proto';
import type { Deps } from '../app/deps';
import { countSubscribers } from '../app/subscriber-reports';

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$/;

function instants(values: string[]): Date[] {
  return values.map((v, i) => {
    const d = new Date(v);
    if (!ISO_INSTANT.test(v) || Number.isNaN(+d)) throw invalid('validation_failed', `boundary ${i} is not a UTC ISO 8601 instant`, [{ path: `boundaries[${i}]`, problem: 'must be a UTC ISO 8601 instant' }]);
    return d;
  });
}

export function subscriberReportHandlers(deps: Deps): AsyncHandlers<subscriberReportsV1.SubscriberReportServiceServer> {
  return {
    async countSubscribers(req) {
      const buckets = await countSubscribers(deps, { accountId: accountOf(req), boundaries: instants(req.boundaries ?? []) });
      return { buckets: buckets.map((c) => ({ newSubscribers: String(c.newSubscribers), confirmed: String(c.confirmed), unsubscribed: String(c.unsubscribed) })) };
    },
  };
}
