// mailer.messaging.v1.MessagingService: Describe, and the operator's re-sealing of every DKIM key.
import type { AsyncHandlers } from '@mailer/kit';
import { messagingV1 } from '@mailer/proto';
import { resealDkimKeys, type SendingDomainDeps } from '../app/sending-domains';

export function messagingHandlers(deps: Pick<SendingDomainDeps, 'store' | 'keys'>): AsyncHandlers<messagingV1.MessagingServiceServer> {
  return {
    describe: async () => ({ service: 'messaging', protoPackage: messagingV1.protobufPackage }),
    resealSecrets: () => resealDkimKeys(deps),
  };
}
