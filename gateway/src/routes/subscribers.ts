import { Router } from 'express';
import { subscriberV1 } from '@mailer/proto';
import type { ServiceClients } from '../clients';
import { validated } from './validated';

type Status = 'UNCONFIRMED' | 'ACTIVE' | 'UNSUBSCRIBED' | 'BOUNCED' | 'COMPLAINED' | 'BLOCKED';
const S = subscriberV1.SubscriberStatus;

const STATUS_TO_PROTO: Record<Status, subscriberV1.SubscriberStatus> = {
  UNCONFIRMED: S.SUBSCRIBER_STATUS_UNCONFIRMED,
  ACTIVE: S.SUBSCRIBER_STATUS_ACTIVE,
  UNSUBSCRIBED: S.SUBSCRIBER_STATUS_UNSUBSCRIBED,
  BOUNCED: S.SUBSCRIBER_STATUS_BOUNCED,
  COMPLAINED: S.SUBSCRIBER_STATUS_COMPLAINED,
  BLOCKED: S.SUBSCRIBER_STATUS_BLOCKED,
};
const STATUS_FROM_PROTO = new Map(Object.entries(STATUS_TO_PROTO).map(([name, value]) => [value, name as Status]));

export function statusFromProto(status: subscriberV1.SubscriberStatus): Status {
  const name = STATUS_FROM_PROTO.get(status);
  if (!name) throw new Error(`subscriber service returned an unknown status ${status}`);
  return name;
}

function fieldRefJson(ref: subscriberV1.FieldRef | undefined) {
  const r = ref?.ref;
  if (r?.$case === 'fieldId') return { type: 'CUSTOM', fieldId: r.value };
  return { type: 'BUILT_IN', builtInField: r?.value ?? 'EMAIL' };
}

/** Subscriber (read record) as the contract spells it; optional members appear only when recorded. */
export function subscriberJson(s: subscriberV1.Subscriber) {
  return {
    id: s.id,
    email: s.email,
    firstName: s.firstName ?? null,
    subscriberStatus: statusFromProto(s.subscriberStatus),
    values: s.values.map((v) => ({
      fieldRef: fieldRefJson(v.fieldRef),
      personalizationTagName: v.personalizationTagName,
      label: v.label,
      displayValue: v.displayValue,
    })),
    tags: s.tags,
    registeredAt: s.registeredAt,
    ...(s.lastImportedAtUtc ? { lastImportedAtUtc: s.lastImportedAtUtc } : {}),
    ...(s.gdprAgreement ? { gdprAgreement: s.gdprAgreement } : {}),
  };
}

function overviewJson(s: subscriberV1.SubscriberOverview) {
  return {
    id: s.id,
    email: s.email,
    firstName: s.firstName ?? null,
    subscriberStatus: statusFromProto(s.subscriberStatus),
    tags: s.tags,
    registeredAt: s.registeredAt,
  };
}

function statusCountsJson(c: subscriberV1.StatusCounts | undefined) {
  const n = (v: string | undefined) => Number(v ?? 0);
  return {
    UNCONFIRMED: n(c?.unconfirmed),
    ACTIVE: n(c?.active),
    UNSUBSCRIBED: n(c?.unsubscribed),
    BOUNCED: n(c?.bounced),
    COMPLAINED: n(c?.complained),
    BLOCKED: n(c?.blocked),
  };
}

interface AddSubscriberBody {
  email: string;
  firstName?: string | null;
  subscriberStatus: Status;
}
interface ListQuery {
  pageNumber: number;
  pageSize: number;
  status?: Status;
  tagId?: string;
  topicId?: string;
  search?: string;
}

/** Subscribers (subscriber service). The account always comes from the API key, never from the request. */
export function subscriberRoutes(clients: ServiceClients): Router {
  const router = Router();
  const call = (requestId: string) => ({ metadata: { 'x-request-id': requestId } });

  router.get('/subscribers', async (req, res) => {
    const { query } = validated<never, ListQuery>('listSubscribers', req);
    const page = await clients.subscriber.listSubscribers(
      {
        accountId: req.account!.accountId,
        pageNumber: query.pageNumber,
        pageSize: query.pageSize,
        status: query.status ? STATUS_TO_PROTO[query.status] : S.SUBSCRIBER_STATUS_UNSPECIFIED,
        tagId: query.tagId?.toLowerCase(),
        topicId: query.topicId?.toLowerCase(),
        search: query.search,
      },
      call(req.requestId),
    );
    res.json({
      items: page.items.map(overviewJson),
      pageNumber: page.pageNumber,
      pageSize: page.pageSize,
      totalItems: Number(page.totalItems),
      totalPages: page.totalPages,
      statusCounts: statusCountsJson(page.statusCounts),
    });
  });

  router.post('/subscribers', async (req, res) => {
    const { body } = validated<AddSubscriberBody>('addSubscriber', req);
    const { subscriber } = await clients.subscriber.addSubscriber(
      {
        accountId: req.account!.accountId,
        email: body.email,
        firstName: body.firstName ?? undefined,
        subscriberStatus: STATUS_TO_PROTO[body.subscriberStatus],
        tags: [],
        topicIds: [],
        topicIdsGiven: false,
        fields: [],
      },
      call(req.requestId),
    );
    if (!subscriber) throw new Error('subscriber service answered AddSubscriber without a subscriber');
    res.status(201).location(`/subscribers/${subscriber.id}`).json(subscriberJson(subscriber));
  });

  router.get('/subscribers/:subscriberId', async (req, res) => {
    const { params } = validated<never, never, { subscriberId: string }>('getSubscriber', req);
    const { subscriber } = await clients.subscriber.getSubscriber(
      { accountId: req.account!.accountId, subscriberId: params.subscriberId.toLowerCase() },
      call(req.requestId),
    );
    if (!subscriber) throw new Error('subscriber service answered GetSubscriber without a subscriber');
    res.json(subscriberJson(subscriber));
  });

  return router;
}
