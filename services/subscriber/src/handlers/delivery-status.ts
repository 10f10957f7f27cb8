// SetDeliveryStatus (system only: the messaging service's bounce and complaint effects) -> app/delivery-status.ts.
import { accountOf, invalid, type AsyncHandlers } from '@mailer/kit';
import { subscriberV1 } from '@mailer/proto';
import type { Deps } from '../app/deps';
import { setDeliveryStatus } from '../app/delivery-status';
import { canonicalEmail } from '../domain/email';
import { parseId } from '../domain/ids';
import { statusFromProto, statusToProto } from './mapping';

export function deliveryStatusHandlers(deps: Deps): Pick<AsyncHandlers<subscriberV1.SubscriberServiceServer>, 'setDeliveryStatus'> {
  return {
    async setDeliveryStatus(req) {
      const accountId = accountOf(req);
      const status = statusFromProto(req.subscriberStatus);
      if (!status) throw invalid('validation_failed', 'subscriberStatus is required', [{ path: 'subscriberStatus', problem: 'required' }]);
      const optOutTopicId = req.optOutTopicId ? parseId(req.optOutTopicId, 'optOutTopicId') : null;
      const after = await setDeliveryStatus(deps, { accountId, email: canonicalEmail(req.email), status, optOutTopicId });
      return after
        ? { found: true, subscriberStatus: statusToProto(after) }
        : { found: false, subscriberStatus: subscriberV1.SubscriberStatus.SUBSCRIBER_STATUS_UNSPECIFIED };
    },
  };
}
