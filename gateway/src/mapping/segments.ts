import { protoEnum } from '@mailer/kit';
import { segmentV1 } from '@mailer/proto';
import type { Schemas } from '../openapi/types';
import { BuiltInFields, SubscriberStatuses } from './enums';
import { int64, present } from './numbers';

// Segments: API bodies <-> segment service messages. The expression's closed vocabularies are proto
// enums translated by name (the OpenAPI validation has already refused names outside them); JSON
// `null` and absence both become an absent proto member or UNSPECIFIED (and those are answered as
// absent / null). A name the service answers that has no API name is its bug (500).

export const SegmentSubjectTypes = protoEnum(segmentV1.SegmentSubjectType, 'SEGMENT_SUBJECT_TYPE_');
export const SegmentOperators = protoEnum(segmentV1.SegmentOperator, 'SEGMENT_OPERATOR_');
export const SegmentOperandKinds = protoEnum(segmentV1.SegmentOperandKind, 'SEGMENT_OPERAND_KIND_');
export const SegmentFieldRefTypes = protoEnum(segmentV1.SegmentFieldRefType, 'SEGMENT_FIELD_REF_TYPE_');
export const PurchaseScopeKinds = protoEnum(segmentV1.PurchaseScopeKind, 'PURCHASE_SCOPE_KIND_');
export const PurchasePeriodKinds = protoEnum(segmentV1.PurchasePeriodKind, 'PURCHASE_PERIOD_KIND_');

const undef = <T>(v: T | null | undefined): T | undefined => (v === null ? undefined : v);
const lower = (v: string | null | undefined) => (v ? v.toLowerCase() : undefined);

function purchaseToProto(p: Schemas['PurchaseSegmentCondition'] | null | undefined): segmentV1.PurchaseSegmentCondition | undefined {
  if (!p) return undefined;
  return {
    sourceId: lower(p.sourceId),
    scopeKind: PurchaseScopeKinds.toProtoOrUnspecified(p.scopeKind),
    products: (p.products ?? []).map((x) => ({ productId: x.productId, variantId: undef(x.variantId) })),
    groupId: undef(p.groupId),
    period: p.period ? { kind: PurchasePeriodKinds.toProto(p.period.kind), days: undef(p.period.days), from: undef(p.period.from), to: undef(p.period.to) } : undefined,
    count: undef(p.count),
    currency: undef(p.currency),
    amount: undef(p.amount),
    couponCode: undef(p.couponCode),
    timeZoneId: undef(p.timeZoneId),
  };
}

function operandToProto(o: Schemas['SegmentOperand']): segmentV1.SegmentOperand {
  return {
    kind: SegmentOperandKinds.toProto(o.kind),
    text: undef(o.text),
    number: undef(o.number),
    date: undef(o.date),
    optionIds: (o.optionIds ?? []).map((id) => id.toLowerCase()),
    segmentId: lower(o.segmentId),
    purchase: purchaseToProto(o.purchase),
  };
}

export function expressionToProto(e: Schemas['SegmentExpression']): segmentV1.SegmentExpression {
  return {
    conditionGroups: e.conditionGroups.map((g) => ({
      conditions: g.conditions.map((c) => ({
        subjectType: SegmentSubjectTypes.toProto(c.subjectType),
        fieldRef: c.fieldRef
          ? {
              type: SegmentFieldRefTypes.toProto(c.fieldRef.type),
              builtInField: c.fieldRef.builtInField == null ? undefined : BuiltInFields.toProto(c.fieldRef.builtInField),
              fieldId: lower(c.fieldRef.fieldId),
            }
          : undefined,
        operator: SegmentOperators.toProto(c.operator),
        operand: operandToProto(c.operand),
      })),
    })),
  };
}

export const segmentToProto = (accountId: string, body: Schemas['SegmentRequest']): segmentV1.CreateSegmentRequest => ({
  accountId,
  name: body.name,
  expression: expressionToProto(body.expression),
});

// ---- responses ----------------------------------------------------------------------------------

/** Only the members that are set (an absent optional member is left out, never sent as a default). */
const defined = <T extends Record<string, unknown>>(o: T) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

function purchaseJson(p: segmentV1.PurchaseSegmentCondition) {
  return defined({
    sourceId: p.sourceId ?? null,
    scopeKind: PurchaseScopeKinds.fromProto(p.scopeKind),
    products: p.products.length ? p.products.map((x) => defined({ productId: x.productId, variantId: x.variantId })) : undefined,
    groupId: p.groupId,
    period: p.period ? defined({ kind: PurchasePeriodKinds.fromProto(p.period.kind), days: p.period.days, from: p.period.from, to: p.period.to }) : undefined,
    count: p.count,
    currency: p.currency,
    amount: p.amount,
    couponCode: p.couponCode,
    timeZoneId: p.timeZoneId,
  });
}

function operandJson(o: segmentV1.SegmentOperand | undefined) {
  const operand = present(o, 'an operand');
  return defined({
    kind: SegmentOperandKinds.fromProto(operand.kind),
    text: operand.text,
    number: operand.number,
    date: operand.date,
    optionIds: operand.kind === segmentV1.SegmentOperandKind.SEGMENT_OPERAND_KIND_OPTIONS || operand.optionIds.length ? operand.optionIds : undefined,
    segmentId: operand.segmentId,
    purchase: operand.purchase ? purchaseJson(operand.purchase) : undefined,
  });
}

export function expressionJson(e: segmentV1.SegmentExpression | undefined) {
  const expression = present(e, 'an expression');
  return {
    conditionGroups: expression.conditionGroups.map((g) => ({
      conditions: g.conditions.map((c) => ({
        subjectType: SegmentSubjectTypes.fromProto(c.subjectType),
        fieldRef: c.fieldRef
          ? c.fieldRef.type === segmentV1.SegmentFieldRefType.SEGMENT_FIELD_REF_TYPE_CUSTOM
            ? { type: 'CUSTOM', fieldId: c.fieldRef.fieldId ?? null }
            : { type: SegmentFieldRefTypes.fromProto(c.fieldRef.type), builtInField: c.fieldRef.builtInField === undefined ? null : BuiltInFields.fromProto(c.fieldRef.builtInField) }
          : null,
        operator: SegmentOperators.fromProto(c.operator),
        operand: operandJson(c.operand),
      })),
    })),
  };
}

export function segmentJson(s: segmentV1.Segment | undefined) {
  const segment = present(s, 'a segment');
  return { id: segment.id, name: segment.name, expression: expressionJson(segment.expression), createdAt: segment.createdAt, updatedAt: segment.updatedAt };
}

export const segmentCountJson = (c: segmentV1.SegmentCount | undefined) => ({ subscriberCount: int64(present(c, 'a segment count').subscriberCount) });

export function segmentPreviewJson(p: segmentV1.SegmentPreview | undefined) {
  const preview = present(p, 'a segment preview');
  return {
    matchingCount: int64(preview.matchingCount),
    unknownCount: int64(preview.unknownCount),
    reachableCount: int64(preview.reachableCount),
    contacts: preview.contacts.map((c) => ({ id: c.id, email: c.email, firstName: c.firstName ?? null, subscriberStatus: SubscriberStatuses.fromProto(c.subscriberStatus) })),
    captureScopes: preview.captureScopes.map((s) => ({
      sourceId: s.sourceId,
      sourceName: s.name,
      timeZone: s.timeZone ?? null,
      capturedOrdersFromUtc: s.capturedOrdersFromUtc ?? null,
      capturedOrdersToUtc: s.capturedOrdersToUtc ?? null,
      baselineOpen: s.baselineOpen,
      attributionStartedAtUtc: s.attributionStartedAtUtc ?? null,
    })),
  };
}

// ---- purchase sources ---------------------------------------------------------------------------

export const purchaseOrderToProto = (o: Schemas['PurchaseOrder']): segmentV1.PurchaseOrder => ({
  orderId: o.orderId,
  email: o.email,
  orderedAt: o.orderedAt,
  currency: o.currency,
  amount: o.amount,
  couponCode: undef(o.couponCode),
  items: o.items.map((it) => ({ productId: it.productId, variantId: undef(it.variantId), groupId: undef(it.groupId) })),
});

/** PurchaseSource: an absent capturedOrdersToUtc (capturing live) is answered as null. */
export function purchaseSourceJson(s: segmentV1.PurchaseSource | undefined) {
  const source = present(s, 'a purchase source');
  return {
    id: source.id,
    name: source.name,
    timeZone: source.timeZone,
    capturedOrdersFromUtc: source.capturedOrdersFromUtc,
    capturedOrdersToUtc: source.capturedOrdersToUtc ?? null,
    baselineOpen: source.baselineOpen,
    attributionStartedAtUtc: source.attributionStartedAtUtc,
  };
}
