// mailer.messaging.v1.BroadcastService: gRPC <-> the use cases of app/broadcasts.ts (handlers only translate).
import { accountOf, type AsyncHandlers, pageOf, protoEnum } from '@mailer/kit';
import { broadcastsV1 } from '@mailer/proto';
import type { BroadcastDeps } from '../app/broadcast-ports';
import {
  broadcastView,
  cancelBroadcast,
  createBroadcast,
  deleteBroadcast,
  getBroadcast,
  listBroadcastRecipients,
  listBroadcasts,
  resendToNonOpeners,
  scheduleBroadcast,
  sendBroadcastTest,
  updateBroadcast,
  type BroadcastView,
} from '../app/broadcasts';
import type { BroadcastRequest, BroadcastStatus, ReaderStatus } from '../domain/broadcast';
import type { BroadcastDoc } from '../store/broadcasts';

const Statuses = protoEnum(broadcastsV1.BroadcastStatus, 'BROADCAST_STATUS_');
const Metrics = protoEnum(broadcastsV1.AbTestMetric, 'AB_TEST_METRIC_');
const ReaderStatuses = protoEnum(broadcastsV1.RecipientStatus, 'RECIPIENT_STATUS_');
const Reasons = protoEnum(broadcastsV1.ExclusionReason, 'EXCLUSION_REASON_');

const NO_MAIL = { recipients: 0, delivered: 0, humanOpens: 0, humanClicks: 0 };
const iso = (d: Date | null | undefined) => (d ? new Date(d).toISOString() : undefined);

/** The request as the domain reads it; an unknown metric is left for its check to refuse. */
function requestOf(b: broadcastsV1.BroadcastInput | undefined): BroadcastRequest {
  const ab = b?.abTest;
  const w = b?.sendWindow;
  return {
    name: b?.name,
    templateName: b?.templateName,
    senderProfileId: b?.senderProfileId ?? null,
    segmentId: b?.segmentId ?? null,
    topicId: b?.topicId ?? null,
    subject: b?.subject ?? null,
    abTest: ab ? { subjects: ab.subjects, testPercent: ab.testPercent, decideAfterMinutes: ab.decideAfterMinutes, metric: (Metrics.tryFromProto(ab.metric) ?? '') as 'HUMAN_CLICKS' } : null,
    sendWindow: w ? { startHour: w.startHour, endHour: w.endHour, timeZoneField: w.timeZoneField ?? null, defaultTimeZone: w.defaultTimeZone } : null,
  };
}

/** The Broadcast with its reconciliation and variants. */
function broadcastToProto({ broadcast: b, tally: { reconciliation: r, variants } }: BroadcastView): broadcastsV1.Broadcast {
  return {
    id: b._id,
    input: {
      name: b.name,
      templateName: b.templateName,
      senderProfileId: b.senderProfileId ?? undefined,
      segmentId: b.segmentId ?? undefined,
      topicId: b.topicId ?? undefined,
      subject: b.subject ?? undefined,
      abTest: b.abTest ? { ...b.abTest, metric: Metrics.toProto(b.abTest.metric) } : undefined,
      sendWindow: b.sendWindow ? { ...b.sendWindow, timeZoneField: b.sendWindow.timeZoneField ?? undefined } : undefined,
    },
    status: Statuses.toProto(b.status),
    sendAt: iso(b.sendAt),
    startedAt: iso(b.startedAt),
    finishedAt: iso(b.finishedAt),
    lastError: b.lastError ?? undefined,
    reconciliation: {
      audience: r.audience,
      excluded: {
        notActive: r.excluded.NOT_ACTIVE,
        notInTopic: r.excluded.NOT_IN_TOPIC,
        optedOut: r.excluded.OPTED_OUT,
        notInSegment: r.excluded.NOT_IN_SEGMENT,
        segmentUnknown: r.excluded.SEGMENT_UNKNOWN,
        suppressed: r.excluded.SUPPRESSED,
      },
      recipients: r.recipients,
      pending: r.status.PENDING,
      sent: r.status.SENT,
      delivered: r.status.DELIVERED,
      deferred: r.status.DEFERRED,
      failed: r.status.FAILED,
      bounced: r.status.BOUNCED,
      suppressed: r.status.SUPPRESSED,
    },
    // Without an A/B test there is nothing to compare: no variants.
    variants: (b.abTest?.subjects ?? []).map((subject, i) => ({ subject, ...(variants[i] ?? NO_MAIL), winner: b.winner === i })),
    createdAt: iso(b.createdAt)!,
    updatedAt: iso(b.updatedAt)!,
    resendOf: b.resendOf ?? undefined,
  };
}

export function broadcastHandlers(deps: BroadcastDeps): AsyncHandlers<broadcastsV1.BroadcastServiceServer> {
  const answer = async (b: BroadcastDoc) => ({ broadcast: broadcastToProto(await broadcastView(deps, b)) });
  return {
    createBroadcast: async (req) => answer(await createBroadcast(deps, accountOf(req), requestOf(req.broadcast))),
    getBroadcast: async (req) => answer(await getBroadcast(deps, accountOf(req), req.broadcastId)),
    async listBroadcasts(req) {
      const { pageNumber, pageSize } = pageOf(req.pageNumber, req.pageSize);
      const status = Statuses.tryFromProto(req.status) as BroadcastStatus | undefined;
      const { items, total } = await listBroadcasts(deps, accountOf(req), { status, pageNumber, pageSize });
      return { items: items.map(broadcastToProto), pageNumber, pageSize, totalItems: total, totalPages: Math.ceil(total / pageSize) };
    },
    updateBroadcast: async (req) => answer(await updateBroadcast(deps, accountOf(req), req.broadcastId, requestOf(req.broadcast))),
    async deleteBroadcast(req) {
      await deleteBroadcast(deps, accountOf(req), req.broadcastId);
      return {};
    },
    scheduleBroadcast: async (req) => answer(await scheduleBroadcast(deps, accountOf(req), req.broadcastId, req.sendAt)),
    cancelBroadcast: async (req) => answer(await cancelBroadcast(deps, accountOf(req), req.broadcastId)),
    sendBroadcastTest: async (req) => ({ messageIds: await sendBroadcastTest(deps, accountOf(req), req.broadcastId, req.emails) }),
    async listBroadcastRecipients(req) {
      const { pageNumber, pageSize } = pageOf(req.pageNumber, req.pageSize);
      const status = ReaderStatuses.tryFromProto(req.status) as ReaderStatus | undefined;
      const { items, total } = await listBroadcastRecipients(deps, accountOf(req), req.broadcastId, { status, variant: req.variant, pageNumber, pageSize });
      return {
        items: items.map((r) => ({
          subscriberId: r.subscriberId,
          email: r.email,
          status: ReaderStatuses.toProto(r.status),
          variant: r.variant ?? undefined,
          messageId: r.messageId ?? undefined,
          reason: r.reason ? Reasons.toProto(r.reason) : broadcastsV1.ExclusionReason.EXCLUSION_REASON_UNSPECIFIED,
        })),
        pageNumber,
        pageSize,
        totalItems: total,
        totalPages: Math.ceil(total / pageSize),
      };
    },
    resendToNonOpeners: async (req) => answer(await resendToNonOpeners(deps, accountOf(req), req.broadcastId, { subject: req.subject, sendAt: req.sendAt })),
  };
}
