import { commonV1, subscriberV1 } from '@mailer/proto';
import { protoEnum } from '@mailer/kit';

/** Every proto enum the subscriber domain's API shows, each through the one generic helper. */
export const SubscriberStatuses = protoEnum(subscriberV1.SubscriberStatus, 'SUBSCRIBER_STATUS_');
export const FieldTypes = protoEnum(subscriberV1.FieldType, 'FIELD_TYPE_');
export const BuiltInFields = protoEnum(subscriberV1.BuiltInField, 'BUILT_IN_FIELD_');
export const SyncModes = protoEnum(subscriberV1.SyncMode, 'SYNC_MODE_');
export const SyncOutcomes = protoEnum(subscriberV1.SyncOutcome, 'SYNC_OUTCOME_');
export const FieldUsageCategories = protoEnum(commonV1.FieldUsageCategory, 'FIELD_USAGE_CATEGORY_');

export type SubscriberStatus = (typeof SubscriberStatuses.names)[number];
export type SyncMode = (typeof SyncModes.names)[number];

/** Statuses a client may set by hand (replacements); anything else is `subscriber_status_not_manual`. */
export const MANUAL_STATUSES = ['ACTIVE', 'UNSUBSCRIBED', 'BLOCKED'] as const satisfies readonly SubscriberStatus[];
/** Statuses a subscriber may be created with (AddSubscriber, sync). */
export const CREATE_STATUSES = [...MANUAL_STATUSES, 'UNCONFIRMED'] as const satisfies readonly SubscriberStatus[];
