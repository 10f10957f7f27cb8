// AudienceService.ListAudience: parses the request and calls its use case in app/audience.ts.
import { accountOf, type AsyncHandlers } from '@mailer/kit';
import type { audienceV1 } from '@mailer/proto';
import type { Deps } from '../app/deps';
import { listAudience } from '../app/audience';
import { parseId } from '../domain/ids';
import { audienceRecipientToProto } from './mapping';

export function audienceHandlers(deps: Deps): AsyncHandlers<audienceV1.AudienceServiceServer> {
  return {
    async listAudience(req) {
      const accountId = accountOf(req);
      const { recipients, catalog, next } = await listAudience(deps, {
        accountId,
        segmentId: req.segmentId ? parseId(req.segmentId, 'segmentId') : undefined,
        topicId: req.topicId ? parseId(req.topicId, 'topicId') : undefined,
        after: req.afterSubscriberId ? parseId(req.afterSubscriberId, 'afterSubscriberId') : '',
        pageSize: req.pageSize,
      });
      return { recipients: recipients.map((s) => audienceRecipientToProto(s, catalog)), nextAfterSubscriberId: next };
    },
  };
}
