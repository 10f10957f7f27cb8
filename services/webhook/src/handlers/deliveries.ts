// WebhookDeliveryService RPCs: each parses its request and calls its use case in app/deliveries.ts.
import { accountOf, invalid, protoEnum, type AsyncHandlers } from '@mailer/kit';
import { webhookDeliveriesV1 as v1 } from '@mailer/proto';
import { listDeliveries, redeliver, sendTestEvent, type DeliveryLogDeps } from '../app/deliveries';
import type { DeliveryDoc } from '../store/deliveries';

const statuses = protoEnum(v1.DeliveryStatus, 'DELIVERY_STATUS_');

export const deliveryToProto = (d: DeliveryDoc): v1.Delivery => ({
  deliveryId: d._id,
  eventId: d.eventId,
  type: d.type,
  status: statuses.toProto(d.status),
  attempts: d.attempts.map((a) => ({
    at: new Date(a.at).toISOString(),
    statusCode: a.statusCode ?? undefined,
    durationMs: a.durationMs,
    error: a.error ?? undefined,
    responseBody: a.responseBody ?? undefined,
  })),
  nextAttemptAt: d.nextAttemptAt ? new Date(d.nextAttemptAt).toISOString() : undefined,
  createdAt: new Date(d.createdAt).toISOString(),
});

export function deliveryHandlers(deps: DeliveryLogDeps): AsyncHandlers<v1.WebhookDeliveryServiceServer> {
  return {
    async listDeliveries(req) {
      const status = req.status === 0 ? undefined : statuses.tryFromProto(req.status);
      if (req.status !== 0 && !status) throw invalid('validation_failed', `unknown delivery status ${req.status}`, [{ path: 'status', problem: 'unknown status' }]);
      const page = await listDeliveries(deps, { accountId: accountOf(req), subscriptionId: req.subscriptionId, status, pageNumber: req.pageNumber, pageSize: req.pageSize });
      return { items: page.items.map(deliveryToProto), pageNumber: page.pageNumber, pageSize: page.pageSize, totalItems: String(page.totalItems), totalPages: page.totalPages };
    },
    async redeliver(req) {
      await redeliver(deps, { accountId: accountOf(req), subscriptionId: req.subscriptionId, deliveryId: req.deliveryId });
      return {};
    },
    async sendTestEvent(req) {
      return { deliveryId: await sendTestEvent(deps, { accountId: accountOf(req), subscriptionId: req.subscriptionId }) };
    },
  };
}
