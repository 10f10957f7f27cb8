// AudienceService: parses the requests and calls the use cases in app/audience.ts.
import { accountOf, type AsyncHandlers } from '@mailer/kit';
import { audienceV1 } from '@mailer/proto';
import type { Deps } from '../app/deps';
import { checkAudience, findRecipients, listAudience, type AudienceReader } from '../app/audience';
import type { Catalog } from '../domain/fields';
import { parseId } from '../domain/ids';
import { audienceRecipientToProto, recipientToProto } from './mapping';

const EXCLUSIONS = {
  NOT_ACTIVE: audienceV1.AudienceExclusion.AUDIENCE_EXCLUSION_NOT_ACTIVE,
  NOT_IN_TOPIC: audienceV1.AudienceExclusion.AUDIENCE_EXCLUSION_NOT_IN_TOPIC,
  OPTED_OUT: audienceV1.AudienceExclusion.AUDIENCE_EXCLUSION_OPTED_OUT,
  NOT_IN_SEGMENT: audienceV1.AudienceExclusion.AUDIENCE_EXCLUSION_NOT_IN_SEGMENT,
  SEGMENT_UNKNOWN: audienceV1.AudienceExclusion.AUDIENCE_EXCLUSION_SEGMENT_UNKNOWN,
} as const;

/** A recipient with its render values; an excluded reader with its id, address and reason only. */
const readerToProto = ({ subscriber, exclusion }: AudienceReader, catalog: Catalog): audienceV1.AudienceRecipient =>
  exclusion ? { id: subscriber.id, email: subscriber.email, fields: {}, exclusion: EXCLUSIONS[exclusion] } : audienceRecipientToProto(subscriber, catalog);

const narrowing = (req: { segmentId?: string; topicId?: string }) => ({
  segmentId: req.segmentId ? parseId(req.segmentId, 'segmentId') : undefined,
  topicId: req.topicId ? parseId(req.topicId, 'topicId') : undefined,
});

export function audienceHandlers(deps: Deps): AsyncHandlers<audienceV1.AudienceServiceServer> {
  return {
    async listAudience(req) {
      const { readers, catalog, next } = await listAudience(deps, {
        accountId: accountOf(req),
        ...narrowing(req),
        after: req.afterSubscriberId ? parseId(req.afterSubscriberId, 'afterSubscriberId') : '',
        pageSize: req.pageSize,
        withExcluded: req.withExcluded,
      });
      return { recipients: readers.map((r) => readerToProto(r, catalog)), nextAfterSubscriberId: next };
    },
    async checkAudience(req) {
      const subscriberIds = req.subscriberIds.map((id, i) => parseId(id, `subscriberIds[${i}]`));
      const { readers, catalog } = await checkAudience(deps, { accountId: accountOf(req), ...narrowing(req), subscriberIds });
      return { readers: readers.map((r) => readerToProto(r, catalog)) };
    },
    async findRecipients(req) {
      const { recipients, catalog } = await findRecipients(deps, accountOf(req), req.emails);
      return { recipients: recipients.map((s) => recipientToProto(s, catalog)) };
    },
  };
}
