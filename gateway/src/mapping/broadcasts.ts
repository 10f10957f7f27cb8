// Broadcasts (messaging service) between REST and gRPC. Absent optional members of the service's
// answer are answered as JSON `null`.
import { protoEnum } from '@mailer/kit';
import { broadcastsV1 as v1 } from '@mailer/proto';
import type { Schemas } from '../openapi/types';
import { present } from './numbers';

export const BroadcastStatuses = protoEnum(v1.BroadcastStatus, 'BROADCAST_STATUS_');
export const AbTestMetrics = protoEnum(v1.AbTestMetric, 'AB_TEST_METRIC_');
export const RecipientStatuses = protoEnum(v1.RecipientStatus, 'RECIPIENT_STATUS_');
export const ExclusionReasons = protoEnum(v1.ExclusionReason, 'EXCLUSION_REASON_');

const opt = <T>(v: T | null | undefined): T | undefined => (v === null ? undefined : v);

export const broadcastToProto = (b: Schemas['BroadcastRequest']): v1.BroadcastInput => ({
  name: b.name,
  templateName: b.templateName,
  senderProfileId: opt(b.senderProfileId),
  segmentId: opt(b.segmentId),
  topicId: opt(b.topicId),
  subject: opt(b.subject),
  abTest: b.abTest ? { ...b.abTest, metric: AbTestMetrics.toProtoOrUnspecified(b.abTest.metric) } : undefined,
  sendWindow: b.sendWindow ? { ...b.sendWindow, timeZoneField: opt(b.sendWindow.timeZoneField) } : undefined,
});

export function broadcastJson(response: { broadcast?: v1.Broadcast }) {
  const b = present(response.broadcast, 'the broadcast');
  const input = present(b.input, 'the broadcast');
  const r = present(b.reconciliation, 'the reconciliation');
  const x = present(r.excluded, 'the reconciliation');
  return {
    id: b.id,
    name: input.name,
    templateName: input.templateName,
    senderProfileId: input.senderProfileId ?? null,
    segmentId: input.segmentId ?? null,
    topicId: input.topicId ?? null,
    subject: input.subject ?? null,
    abTest: input.abTest ? { ...input.abTest, metric: AbTestMetrics.fromProto(input.abTest.metric) } : null,
    sendWindow: input.sendWindow ? { ...input.sendWindow, timeZoneField: input.sendWindow.timeZoneField ?? null } : null,
    status: BroadcastStatuses.fromProto(b.status),
    sendAt: b.sendAt ?? null,
    startedAt: b.startedAt ?? null,
    finishedAt: b.finishedAt ?? null,
    lastError: b.lastError ?? null,
    reconciliation: {
      audience: r.audience,
      excluded: { NOT_ACTIVE: x.notActive, NOT_IN_TOPIC: x.notInTopic, OPTED_OUT: x.optedOut, NOT_IN_SEGMENT: x.notInSegment, SEGMENT_UNKNOWN: x.segmentUnknown, SUPPRESSED: x.suppressed },
      recipients: r.recipients,
      pending: r.pending,
      sent: r.sent,
      delivered: r.delivered,
      deferred: r.deferred,
      failed: r.failed,
      bounced: r.bounced,
      suppressed: r.suppressed,
    },
    variants: b.variants.map((v) => ({ subject: v.subject, recipients: v.recipients, delivered: v.delivered, humanOpens: v.humanOpens, humanClicks: v.humanClicks, winner: v.winner })),
    resendOf: b.resendOf ?? null,
    createdAt: b.createdAt,
    updatedAt: b.updatedAt,
  };
}

export const broadcastPageJson = (page: v1.ListBroadcastsResponse) => ({
  items: page.items.map((broadcast) => broadcastJson({ broadcast })),
  pageNumber: page.pageNumber,
  pageSize: page.pageSize,
  totalItems: page.totalItems,
  totalPages: page.totalPages,
});

export const recipientPageJson = (page: v1.ListBroadcastRecipientsResponse) => ({
  items: page.items.map((r) => ({
    subscriberId: r.subscriberId,
    email: r.email,
    status: RecipientStatuses.fromProto(r.status),
    variant: r.variant ?? null,
    messageId: r.messageId ?? null,
    reason: r.reason ? ExclusionReasons.fromProto(r.reason) : null,
  })),
  pageNumber: page.pageNumber,
  pageSize: page.pageSize,
  totalItems: page.totalItems,
  totalPages: page.totalPages,
});
