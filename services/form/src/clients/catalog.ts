// The account's field catalog and topics, asked from the subscriber service (ListFields with archived
// fields, ListTopics) whenever a form is saved or activated; the fields alone whenever readers meet a
// form (its options and tag names as they are now: domain/current-fields.ts). Its own errors pass through; when it
// does not answer, 503 service_unavailable with a fixed text (the cause is logged here).
import { createClient, peerClient, protoEnum, type Logger } from '@mailer/kit';
import { subscriberV1 } from '@mailer/proto';
import type { Catalog, CatalogField } from '../domain/form-request';
import type { BuiltInField, FieldRef, FieldType } from '../domain/form';

export interface CatalogSource {
  snapshot(accountId: string): Promise<Catalog>;
  /** The account's fields, archived ones included: one ListFields call. */
  fields(accountId: string): Promise<CatalogField[]>;
  close(): void;
}

const FieldTypes = protoEnum(subscriberV1.FieldType, 'FIELD_TYPE_');
const BuiltIns = protoEnum(subscriberV1.BuiltInField, 'BUILT_IN_FIELD_');

/** A catalog field's ref; null for a ref this service does not know (skipped). */
function refFromProto(ref: subscriberV1.FieldRef | undefined): FieldRef | null {
  const r = ref?.ref;
  if (r?.$case === 'fieldId') return { type: 'CUSTOM', fieldId: r.value.toLowerCase() };
  if (r?.$case === 'builtInField') return { type: 'BUILT_IN', builtInField: BuiltIns.fromProto(r.value) as BuiltInField };
  return null;
}

export function catalogFieldFromProto(f: subscriberV1.Field): CatalogField | null {
  const ref = refFromProto(f.ref);
  if (!ref) return null;
  return {
    ref,
    personalizationTagName: f.personalizationTagName,
    label: f.label,
    fieldType: FieldTypes.fromProto(f.fieldType) as FieldType,
    required: f.required,
    internal: f.internal,
    active: f.active,
    options: f.options.map((o) => ({ label: o.label, position: o.position, active: o.active })),
  };
}

export function subscriberCatalog(address: string, deadlineMs: number, logger?: Logger): CatalogSource {
  const client = peerClient(createClient(subscriberV1.SubscriberServiceClient, address, deadlineMs), {
    service: 'subscriber',
    errorId: 'service_unavailable',
    message: 'The subscriber service, which holds the fields and topics of forms, is unavailable; retry later.',
    logger,
  });
  const fields = async (accountId: string) => (await client.listFields({ accountId, includeArchived: true })).fields.flatMap((f) => catalogFieldFromProto(f) ?? []);
  return {
    async snapshot(accountId) {
      const [catalog, topics] = await Promise.all([fields(accountId), client.listTopics({ accountId })]);
      return { fields: catalog, topics: topics.items.map((t) => ({ id: t.id, active: t.active })) };
    },
    fields,
    close: () => client.close(),
  };
}
