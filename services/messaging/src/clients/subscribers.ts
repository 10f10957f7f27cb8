// The subscriber service as the messaging service sees it: one gRPC channel (created once in
// server.ts) behind the ports the use cases name. Its own errors pass through (subscriber_not_found,
// topic_not_found); when it does not answer, PeerUnavailable (a job is then retried, a request 503).
import { createClient, DomainError, GrpcStatus, peerClient, protoEnum, TIME_LIMITS, type Logger } from '@mailer/kit';
import { fieldValueToCase, subscriberV1 } from '@mailer/proto';
import type { Recipient, RecipientLookup } from '../mail/app/accept-message';
import type { SubscriberLookup, SubscriberView } from '../mail/app/render-values';
import type { FieldInfo, FieldType, FieldValue } from '../automations/domain/automation';
import type { SubscriberIdLookup } from '../automations/app/record-event';

const SubscriberStatusNames = protoEnum(subscriberV1.SubscriberStatus, 'SUBSCRIBER_STATUS_');
const FieldTypeNames = protoEnum(subscriberV1.FieldType, 'FIELD_TYPE_');

export interface AccountTopic {
  topicId: string;
  label: string;
  description: string | null;
  active: boolean;
}
export interface ReaderTopic {
  topicId: string;
  subscribed: boolean;
  optedOut: boolean;
}

/** What the reader pages need: the account's topics and one reader's subscriptions. */
export interface SubscriberTopics {
  accountTopics(accountId: string): Promise<AccountTopic[]>;
  readerTopics(accountId: string, subscriberId: string): Promise<ReaderTopic[]>;
  optOut(accountId: string, subscriberId: string, topicId: string, source: string): Promise<void>;
  /** The subscriptions become exactly `topicIds` (active topics), personal opt-outs of them lifted. */
  replace(accountId: string, subscriberId: string, topicIds: string[]): Promise<void>;
}

/** What the bounce effects need (events/subscriber-status.ts). */
export interface SubscriberStatuses {
  /** BOUNCED or COMPLAINED for the account's subscriber with this address (none: nothing happens); a complaint also opts out of `optOutTopicId`. */
  setDeliveryStatus(accountId: string, email: string, status: 'BOUNCED' | 'COMPLAINED', optOutTopicId: string | null): Promise<void>;
}

/** What saving an automation checks its steps against (app/automations.ts): the account's tags, topics and custom fields. */
export interface SubscriberCatalog {
  tagIds(accountId: string): Promise<Set<string>>;
  topicIds(accountId: string): Promise<Set<string>>;
  /** Every custom field, archived ones included (built-in fields are never named by id). */
  customFields(accountId: string): Promise<FieldInfo[]>;
}

/** What automation steps change on a subscriber (ADD_TAGS, REMOVE_TAGS, SET_FIELD). */
export interface SubscriberChanges {
  addTags(accountId: string, subscriberId: string, tagIds: string[]): Promise<void>;
  removeTags(accountId: string, subscriberId: string, tagIds: string[]): Promise<void>;
  setFieldValue(accountId: string, subscriberId: string, fieldId: string, value: FieldValue): Promise<void>;
}

export interface SubscriberClient extends SubscriberLookup, RecipientLookup, SubscriberIdLookup, SubscriberTopics, SubscriberStatuses, SubscriberCatalog, SubscriberChanges {
  close(): void;
}

const DELIVERY_STATUS = {
  BOUNCED: subscriberV1.SubscriberStatus.SUBSCRIBER_STATUS_BOUNCED,
  COMPLAINED: subscriberV1.SubscriberStatus.SUBSCRIBER_STATUS_COMPLAINED,
} as const;

/**
 * Lookups on a request's path (render previews, sends) answer within LOOKUP_DEADLINE_MS, which the
 * gateway's deadlines allow for; the other calls (pages, bounce jobs) use the client's 5 s.
 */
const LOOKUP_DEADLINE_MS = TIME_LIMITS.peerCall;
/** Addresses FindSubscribersByEmail takes in one call. */
const EMAILS_PER_LOOKUP = 500;

export function subscriberClient(address: string, logger?: Logger): SubscriberClient {
  const client = peerClient(createClient(subscriberV1.SubscriberServiceClient, address), {
    service: 'subscriber',
    errorId: 'service_unavailable',
    message: 'The subscriber service is unavailable; retry later.',
    logger,
  });
  // A send also needs the status (BLOCKED is never mailed): one call serves both views.
  async function recipientByEmail(accountId: string, email: string): Promise<Recipient | null> {
    try {
      const { subscriber } = await client.getSubscriberByEmail({ accountId, email }, { deadlineMs: LOOKUP_DEADLINE_MS });
      if (!subscriber) return null;
      const fields: Record<string, string> = {};
      for (const v of subscriber.values) if (v.personalizationTagName) fields[v.personalizationTagName] = v.displayValue;
      const status = SubscriberStatusNames.tryFromProto(subscriber.subscriberStatus) ?? 'ACTIVE';
      return { id: subscriber.id, email: subscriber.email, firstName: subscriber.firstName ?? null, fields, status };
    } catch (err) {
      if (err instanceof DomainError && err.code === GrpcStatus.NOT_FOUND) return null;
      throw err;
    }
  }
  return {
    async byEmail(accountId, email): Promise<SubscriberView | null> {
      const found = await recipientByEmail(accountId, email);
      return found && { id: found.id, email: found.email, firstName: found.firstName, fields: found.fields };
    },
    recipientByEmail,
    async subscriberIdsByEmail(accountId, emails) {
      const ids = new Map<string, string>();
      const calls = [];
      for (let i = 0; i < emails.length; i += EMAILS_PER_LOOKUP) calls.push(emails.slice(i, i + EMAILS_PER_LOOKUP));
      await Promise.all(
        calls.map(async (asked) => {
          // one match per address asked, in order
          const { matches } = await client.findSubscribersByEmail({ accountId, emails: asked });
          asked.forEach((email, k) => {
            const id = matches[k]?.subscriberId;
            if (id) ids.set(email, id);
          });
        }),
      );
      return ids;
    },
    async accountTopics(accountId) {
      const { items } = await client.listTopics({ accountId });
      return items.map((t) => ({ topicId: t.id, label: t.label, description: t.description ?? null, active: t.active }));
    },
    async readerTopics(accountId, subscriberId) {
      const { topics } = await client.getSubscriberTopics({ accountId, subscriberId });
      return topics.map((t) => ({ topicId: t.topicId, subscribed: t.subscribed, optedOut: t.optedOut }));
    },
    async optOut(accountId, subscriberId, topicId, source) {
      await client.optOutOfTopic({ accountId, subscriberId, topicId, source });
    },
    async replace(accountId, subscriberId, topicIds) {
      await client.replaceSubscriberTopics({ accountId, subscriberId, topicIds, overrideOptOuts: true });
    },
    async setDeliveryStatus(accountId, email, status, optOutTopicId) {
      await client.setDeliveryStatus({ accountId, email, subscriberStatus: DELIVERY_STATUS[status], optOutTopicId: optOutTopicId ?? undefined });
    },
    async tagIds(accountId) {
      const { items } = await client.listTags({ accountId }, { deadlineMs: LOOKUP_DEADLINE_MS });
      return new Set(items.map((t) => t.id.toLowerCase()));
    },
    async topicIds(accountId) {
      const { items } = await client.listTopics({ accountId }, { deadlineMs: LOOKUP_DEADLINE_MS });
      return new Set(items.map((t) => t.id.toLowerCase()));
    },
    async customFields(accountId) {
      const { fields } = await client.listFields({ accountId, includeArchived: true }, { deadlineMs: LOOKUP_DEADLINE_MS });
      const custom: FieldInfo[] = [];
      for (const f of fields) {
        const type = FieldTypeNames.tryFromProto(f.fieldType);
        if (f.ref?.ref?.$case !== 'fieldId' || type === undefined) continue;
        custom.push({
          id: f.ref.ref.value.toLowerCase(),
          type: type as FieldType,
          active: f.active,
          personalizationTagName: f.personalizationTagName,
          options: f.options.filter((o) => o.id).map((o) => ({ id: o.id!.toLowerCase(), active: o.active })),
        });
      }
      return custom;
    },
    async addTags(accountId, subscriberId, tagIds) {
      await client.addTagsToSubscribers({ accountId, subscriberIds: [subscriberId], tagIds });
    },
    async removeTags(accountId, subscriberId, tagIds) {
      await client.removeTagsFromSubscribers({ accountId, subscriberIds: [subscriberId], tagIds });
    },
    async setFieldValue(accountId, subscriberId, fieldId, value) {
      await client.setFieldValue({ accountId, subscriberId, fieldId, value: { value: fieldValueToCase(value), labels: [] } });
    },
    close: () => client.close(),
  };
}
