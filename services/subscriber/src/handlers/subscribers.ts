// SubscriberService RPCs of subscribers: each parses its request and calls its use case in app/subscribers.ts.
import { accountOf, type AsyncHandlers, DomainError, pageAnswer, pageOf } from '@mailer/kit';
import { statusCountsToProto, type subscriberV1 } from '@mailer/proto';
import type { Deps } from '../app/deps';
import * as subscribers from '../app/subscribers';
import { canonicalEmail, canonicalEmails } from '../domain/email';
import { LIMITS } from '../domain/limits';
import { parseId } from '../domain/ids';
import { prefixPattern } from '../domain/subscriber';
import { assertSyncSize, type SyncRow } from '../domain/sync';
import { overviewToProto, statusFromProto, subscriberInputFromProto, subscriberMatchToProto, subscriberToProto, syncModeFromProto, syncOutcomeToProto } from './mapping';

type SubscriberRpcs = 'addSubscriber' | 'getSubscriber' | 'getSubscriberByEmail' | 'findSubscribersByEmail' | 'deleteSubscriber' | 'listSubscribers' | 'syncSubscribers';

export function subscriberHandlers(deps: Deps): Pick<AsyncHandlers<subscriberV1.SubscriberServiceServer>, SubscriberRpcs> {
  return {
    async addSubscriber(req) {
      const accountId = accountOf(req);
      const { state, defs } = await subscribers.addSubscriber(deps, { accountId, subscriber: subscriberInputFromProto(req) });
      return { subscriber: subscriberToProto(state, defs.catalog) };
    },

    async getSubscriber(req) {
      const accountId = accountOf(req);
      const { state, catalog } = await subscribers.getSubscriber(deps, { accountId, subscriberId: parseId(req.subscriberId, 'subscriberId') });
      return { subscriber: subscriberToProto(state, catalog) };
    },

    async getSubscriberByEmail(req) {
      const accountId = accountOf(req);
      const { state, catalog } = await subscribers.getSubscriberByEmail(deps, { accountId, email: canonicalEmail(req.email) });
      return { subscriber: subscriberToProto(state, catalog) };
    },

    async findSubscribersByEmail(req) {
      const accountId = accountOf(req);
      const emails = canonicalEmails(req.emails, 'emails', LIMITS.emailsPerLookup);
      const found = await subscribers.findSubscribersByEmail(deps, { accountId, emails });
      return { matches: found.map((s, i) => subscriberMatchToProto(emails[i], s)) };
    },

    async deleteSubscriber(req) {
      const accountId = accountOf(req);
      await subscribers.deleteSubscriber(deps, { accountId, subscriberId: parseId(req.subscriberId, 'subscriberId') });
      return {};
    },

    async listSubscribers(req) {
      const accountId = accountOf(req);
      const page = pageOf(req.pageNumber, req.pageSize);
      const status = statusFromProto(req.status, 'status');
      const tagId = req.tagId ? parseId(req.tagId, 'tagId') : undefined;
      const topicId = req.topicId ? parseId(req.topicId, 'topicId') : undefined;
      const prefix = req.search ? prefixPattern(req.search) : undefined;
      const segmentId = req.segmentId ? parseId(req.segmentId, 'segmentId') : undefined;
      const { items, total, counts } = await subscribers.listSubscribers(deps, { accountId, page, status, tagId, topicId, prefix, search: req.search, segmentId });
      return {
        items: items.map(overviewToProto),
        ...pageAnswer(page, total),
        statusCounts: statusCountsToProto(counts),
      };
    },

    async syncSubscribers(req) {
      const accountId = accountOf(req);
      assertSyncSize(req.subscribers.length);
      const mode = syncModeFromProto(req.mode);
      // a row that cannot be read fails alone, at its index; the others are still applied
      const rows: SyncRow[] = req.subscribers.map((r, i) => {
        try {
          return subscriberInputFromProto(r, `subscribers[${i}].`);
        } catch (err) {
          if (err instanceof DomainError) return { unreadable: err, email: r.email };
          throw err;
        }
      });
      const results = await subscribers.syncSubscribers(deps, { accountId, mode, rows });
      return {
        results: results.map((r) => ({
          index: r.index,
          email: r.email,
          subscriberId: r.subscriberId,
          outcome: syncOutcomeToProto(r.outcome),
          errorId: r.errorId,
          message: r.message,
        })),
      };
    },
  };
}
