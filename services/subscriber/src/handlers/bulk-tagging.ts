// SubscriberService RPCs of bulk tagging: each parses its request and calls its use case in app/bulk-tagging.ts.
import { accountOf, type AsyncHandlers } from '@mailer/kit';
import type { subscriberV1 } from '@mailer/proto';
import * as tagging from '../app/bulk-tagging';
import type { Deps } from '../app/deps';
import { parseIdList } from '../domain/ids';
import { LIMITS } from '../domain/limits';

type BulkTaggingRpcs = 'addTagsToSubscribers' | 'removeTagsFromSubscribers';

function inputOf(req: { accountId: string; subscriberIds: string[]; tagIds: string[] }): tagging.BulkTaggingInput {
  const accountId = accountOf(req);
  const subscriberIds = parseIdList(req.subscriberIds, 'subscriberIds', LIMITS.subscribersPerBulkRequest, { min: 1 });
  const tagIds = parseIdList(req.tagIds, 'tagIds', LIMITS.tagsPerRequest, { min: 1 });
  return { accountId, subscriberIds, tagIds };
}

const skipped = (r: { skippedByStatus: Record<string, number> }) => ({ ...r.skippedByStatus });

export function bulkTaggingHandlers(deps: Deps): Pick<AsyncHandlers<subscriberV1.SubscriberServiceServer>, BulkTaggingRpcs> {
  return {
    async addTagsToSubscribers(req) {
      const r = await tagging.addTagsToSubscribers(deps, inputOf(req));
      return {
        selectedSubscriberCount: r.selectedSubscriberCount,
        taggedSubscriberCount: r.taggedSubscriberCount,
        alreadyTaggedSubscriberCount: r.alreadyTaggedSubscriberCount,
        skippedSubscriberCount: r.skippedSubscriberCount,
        skippedByStatus: skipped(r),
      };
    },

    async removeTagsFromSubscribers(req) {
      const r = await tagging.removeTagsFromSubscribers(deps, inputOf(req));
      return {
        selectedSubscriberCount: r.selectedSubscriberCount,
        updatedSubscriberCount: r.updatedSubscriberCount,
        withoutSelectedTagsSubscriberCount: r.withoutSelectedTagsSubscriberCount,
        skippedSubscriberCount: r.skippedSubscriberCount,
        skippedByStatus: skipped(r),
      };
    },
  };
}
