// mailer.messaging.v1.AudienceSendService: gRPC <-> the use cases of app/audience-send.ts.
import { accountOf, invalid, protoEnum, type AsyncHandlers } from '@mailer/kit';
import { audienceSendsV1, emailMessagesV1 } from '@mailer/proto';
import { countAudienceSends, DEFAULT_AUDIENCE_PAGE_SIZE, queueAudiencePage, type AudienceSendDeps } from '../app/audience-send';
import type { EmailKind } from '../../mail/store/messages';
import { jsonObject } from '../../mail/handlers/email-messages';

const Kinds = protoEnum(emailMessagesV1.EmailKind, 'EMAIL_KIND_');

export function audienceSendHandlers(deps: AudienceSendDeps): AsyncHandlers<audienceSendsV1.AudienceSendServiceServer> {
  return {
    async queueAudiencePage(req) {
      const kind = Kinds.tryFromProto(req.kind);
      if (!kind) throw invalid('validation_failed', 'kind is required', [{ path: 'kind', problem: 'missing' }]);
      const content = req.content ?? { subject: '', html: '', css: '', valuesJson: '' };
      const result = await queueAudiencePage(deps, {
        accountId: accountOf(req),
        sendKey: req.sendKey,
        kind: kind as EmailKind,
        senderProfileId: req.senderProfileId,
        content: { subject: content.subject, html: content.html, css: content.css, values: jsonObject(content.valuesJson, 'content.valuesJson') ?? {} },
        segmentId: req.segmentId || null,
        topicId: req.topicId || null,
        after: req.afterSubscriberId,
        pageSize: req.pageSize || DEFAULT_AUDIENCE_PAGE_SIZE,
      });
      return { recipientCount: result.recipientCount, suppressedCount: result.suppressedCount, nextAfterSubscriberId: result.next };
    },
    async countAudienceSends(req) {
      return { counts: await countAudienceSends(deps, accountOf(req), req.sendKeys) };
    },
  };
}
