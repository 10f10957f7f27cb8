import { randomUUID } from 'node:crypto';
import { invalid, notFound, type AsyncHandlers } from '@mailer/kit';
import { subscriberV1 } from '@mailer/proto';
import { canonicalEmail } from '../domain/email';
import { normalizeFirstName, pageWindow, prefixPattern, statusForNewSubscriber, type SubscriberStatus } from '../domain/subscriber';
import { subscriberEvent } from '../events/subscriber-events';
import type { SubscriberDoc, SubscriberRepository } from '../store/subscribers';

const { SubscriberStatus: Status } = subscriberV1;
const PREFIX = 'SUBSCRIBER_STATUS_';

function statusFromProto(s: subscriberV1.SubscriberStatus): SubscriberStatus | undefined {
  if (s === Status.SUBSCRIBER_STATUS_UNSPECIFIED) return undefined;
  const name = Status[s];
  if (!name) throw invalid('validation_failed', `unknown subscriber status ${s}`);
  return name.slice(PREFIX.length) as SubscriberStatus;
}

const statusToProto = (s: SubscriberStatus): subscriberV1.SubscriberStatus => Status[`${PREFIX}${s}` as keyof typeof Status];

function toSubscriber(doc: SubscriberDoc): subscriberV1.Subscriber {
  const values: subscriberV1.SubscriberFieldValue[] = [
    { fieldRef: { ref: { $case: 'builtInField', value: 'EMAIL' } }, personalizationTagName: 'email', label: 'Email', displayValue: doc.email },
  ];
  if (doc.firstName !== null) {
    values.push({ fieldRef: { ref: { $case: 'builtInField', value: 'FIRST_NAME' } }, personalizationTagName: 'first_name', label: 'First name', displayValue: doc.firstName });
  }
  return {
    id: doc._id,
    email: doc.email,
    firstName: doc.firstName ?? undefined,
    subscriberStatus: statusToProto(doc.status),
    values,
    tags: doc.tags,
    registeredAt: doc.registeredAt,
  };
}

export function subscriberHandlers(repo: SubscriberRepository, onWrite: () => void): AsyncHandlers<subscriberV1.SubscriberServiceServer> {
  return {
    async addSubscriber(req) {
      if (req.tags.length || req.topicIds.length) {
        throw invalid('validation_failed', 'tags and topicIds are not accepted yet');
      }
      const now = new Date().toISOString();
      const firstName = normalizeFirstName(req.firstName);
      const doc: SubscriberDoc = {
        _id: randomUUID(),
        accountId: req.accountId,
        email: canonicalEmail(req.email),
        firstName,
        firstNameLower: firstName?.toLowerCase() ?? null,
        status: statusForNewSubscriber(statusFromProto(req.subscriberStatus)),
        tags: [],
        topicIds: [],
        registeredAt: now,
        updatedAt: now,
      };
      await repo.insert(doc, subscriberEvent('subscriber.created', doc));
      onWrite();
      return { subscriber: toSubscriber(doc) };
    },

    async getSubscriber(req) {
      const doc = await repo.get(req.accountId, req.subscriberId);
      if (!doc) throw notFound('subscriber_not_found', `subscriber ${req.subscriberId} does not exist`);
      return { subscriber: toSubscriber(doc) };
    },

    async listSubscribers(req) {
      const page = pageWindow(req.pageNumber, req.pageSize);
      const { items, total, counts } = await repo.list(
        req.accountId,
        { status: statusFromProto(req.status), tagId: req.tagId, topicId: req.topicId, prefix: req.search ? prefixPattern(req.search) : undefined },
        page.skip,
        page.pageSize,
      );
      return {
        items: items.map((d) => ({ id: d._id, email: d.email, firstName: d.firstName ?? undefined, subscriberStatus: statusToProto(d.status), tags: d.tags, registeredAt: d.registeredAt })),
        pageNumber: page.pageNumber,
        pageSize: page.pageSize,
        totalItems: String(total),
        totalPages: Math.ceil(total / page.pageSize),
        statusCounts: {
          unconfirmed: String(counts.UNCONFIRMED),
          active: String(counts.ACTIVE),
          unsubscribed: String(counts.UNSUBSCRIBED),
          bounced: String(counts.BOUNCED),
          complained: String(counts.COMPLAINED),
          blocked: String(counts.BLOCKED),
        },
      };
    },
  };
}
