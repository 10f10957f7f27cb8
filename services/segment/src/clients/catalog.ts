// The account's field catalog, tags and topics, asked from the subscriber service over gRPC
// (ListFields / ListTags / ListTopics, each with a short deadline). The contact projection does not
// hold the catalog yet; this is the snapshot validation and TOPIC_OPTED_OUT evaluation read.
import { createClient, peerClient, type Logger } from '@mailer/kit';
import { subscriberV1 } from '@mailer/proto';
import type { BuiltInField, FieldType } from '../domain/expression';
import type { CatalogField } from '../domain/validate';

export interface CatalogSnapshot {
  fields: CatalogField[];
  topics: { id: string; active: boolean }[];
  tagIds: string[];
}

export interface CatalogSource {
  snapshot(accountId: string): Promise<CatalogSnapshot>;
  topics(accountId: string): Promise<{ id: string; active: boolean }[]>;
  close(): void;
}

const FIELD_TYPE_PREFIX = 'FIELD_TYPE_';
const BUILT_IN_PREFIX = 'BUILT_IN_FIELD_';

export function fieldFromProto(f: subscriberV1.Field): CatalogField {
  const ref = f.ref?.ref;
  const fieldType = (subscriberV1.FieldType[f.fieldType] ?? '').slice(FIELD_TYPE_PREFIX.length) as FieldType;
  return {
    fieldId: ref?.$case === 'fieldId' ? ref.value : null,
    builtInField: ref?.$case === 'builtInField' ? ((subscriberV1.BuiltInField[ref.value] ?? '').slice(BUILT_IN_PREFIX.length) as BuiltInField) : null,
    fieldType,
    active: f.active,
    options: f.options.filter((o) => o.id).map((o) => ({ id: o.id!, active: o.active })),
  };
}

/**
 * The subscriber service's own errors pass through; when it does not answer, callers get 503
 * `catalog_unavailable` with this fixed text (the cause is logged here).
 */
const catalogPeer = (logger?: Logger) => ({
  service: 'subscriber',
  errorId: 'catalog_unavailable',
  message: 'The subscriber service, whose fields, tags and topics a segment is checked against, is unavailable; retry later.',
  logger,
});

export function subscriberCatalog(address: string, deadlineMs: number, logger?: Logger): CatalogSource {
  const client = peerClient(createClient(subscriberV1.SubscriberServiceClient, address, deadlineMs), catalogPeer(logger));
  const topics = async (accountId: string) => (await client.listTopics({ accountId })).items.map((t) => ({ id: t.id, active: t.active }));
  return {
    async snapshot(accountId) {
      const [fields, tags, tops] = await Promise.all([client.listFields({ accountId, includeArchived: true }), client.listTags({ accountId }), topics(accountId)]);
      return { fields: fields.fields.map(fieldFromProto), tagIds: tags.items.map((t) => t.id), topics: tops };
    },
    topics,
    close: () => client.close(),
  };
}
