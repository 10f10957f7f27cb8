// Proto <-> domain for segment expressions. The proto mirrors the domain shape with proto3
// `optional` members; an absent member becomes null (as JSON would send it), so validate.ts sees
// exactly what the customer API carries. The result is untrusted input for validateExpression.
// Enums become the domain's names; UNSPECIFIED and values this build does not know become null, which
// validate.ts refuses with the same errorIds as an unknown name (never a crash here).
import { protoEnum } from '@mailer/kit';
import { segmentV1, subscriberV1 } from '@mailer/proto';
import type {
  FieldRef,
  PurchasePeriod,
  PurchaseSegmentCondition,
  SegmentCondition,
  SegmentExpression,
  SegmentOperand,
} from '../domain/expression';
import type { SegmentDoc } from '../store/segments';

export const SubjectTypes = protoEnum(segmentV1.SegmentSubjectType, 'SEGMENT_SUBJECT_TYPE_');
export const Operators = protoEnum(segmentV1.SegmentOperator, 'SEGMENT_OPERATOR_');
export const OperandKinds = protoEnum(segmentV1.SegmentOperandKind, 'SEGMENT_OPERAND_KIND_');
export const FieldRefTypes = protoEnum(segmentV1.SegmentFieldRefType, 'SEGMENT_FIELD_REF_TYPE_');
export const BuiltInFields = protoEnum(subscriberV1.BuiltInField, 'BUILT_IN_FIELD_');
export const ScopeKinds = protoEnum(segmentV1.PurchaseScopeKind, 'PURCHASE_SCOPE_KIND_');
export const PeriodKinds = protoEnum(segmentV1.PurchasePeriodKind, 'PURCHASE_PERIOD_KIND_');
export const SubscriberStatuses = protoEnum(subscriberV1.SubscriberStatus, 'SUBSCRIBER_STATUS_');
export const Memberships = protoEnum(segmentV1.SegmentMembership, 'SEGMENT_MEMBERSHIP_');

/** The domain name of an enum value, null for UNSPECIFIED or unknown (the validator reports it). */
const name = <N extends string>(e: { tryFromProto(v: number): N | undefined }, value: number): N | null => e.tryFromProto(value) ?? null;

const orNull = <T>(v: T | undefined): T | null => (v === undefined ? null : v);
const orUndef = <T>(v: T | null | undefined): T | undefined => (v === null || v === undefined ? undefined : v);

function fieldRefFromProto(r: segmentV1.SegmentFieldRef | undefined): unknown {
  if (!r) return null;
  const type = name(FieldRefTypes, r.type);
  const builtInField = r.builtInField === undefined ? null : name(BuiltInFields, r.builtInField);
  if (type === 'BUILT_IN') return { type: 'BUILT_IN', builtInField };
  if (type === 'CUSTOM') return { type: 'CUSTOM', fieldId: orNull(r.fieldId) };
  return { type, builtInField, fieldId: orNull(r.fieldId) };
}

function periodFromProto(p: segmentV1.PurchasePeriod | undefined): PurchasePeriod | null {
  if (!p) return null;
  return { kind: name(PeriodKinds, p.kind) as PurchasePeriod['kind'], days: orNull(p.days), from: orNull(p.from), to: orNull(p.to) };
}

function purchaseFromProto(p: segmentV1.PurchaseSegmentCondition | undefined): PurchaseSegmentCondition | null {
  if (!p) return null;
  return {
    sourceId: orNull(p.sourceId),
    scopeKind: name(ScopeKinds, p.scopeKind) as PurchaseSegmentCondition['scopeKind'],
    products: p.products.length ? p.products.map((x) => ({ productId: x.productId, variantId: orNull(x.variantId) })) : null,
    groupId: orNull(p.groupId),
    period: periodFromProto(p.period),
    count: orNull(p.count),
    currency: orNull(p.currency),
    amount: orNull(p.amount),
    couponCode: orNull(p.couponCode),
    timeZoneId: orNull(p.timeZoneId),
  };
}

function operandFromProto(o: segmentV1.SegmentOperand | undefined): unknown {
  if (!o) return null;
  const kind = name(OperandKinds, o.kind);
  return {
    kind,
    text: orNull(o.text),
    number: orNull(o.number),
    date: orNull(o.date),
    // repeated fields cannot be absent: an empty list on a non-OPTIONS operand means "not given".
    optionIds: kind === 'OPTIONS' || o.optionIds.length > 0 ? o.optionIds : null,
    segmentId: orNull(o.segmentId),
    purchase: purchaseFromProto(o.purchase),
  };
}

/** The request's expression as untrusted domain-shaped data (null when absent). */
export function expressionFromProto(e: segmentV1.SegmentExpression | undefined): unknown {
  if (!e) return null;
  return {
    conditionGroups: e.conditionGroups.map((g) => ({
      conditions: g.conditions.map((c) => ({
        subjectType: name(SubjectTypes, c.subjectType),
        fieldRef: fieldRefFromProto(c.fieldRef),
        operator: name(Operators, c.operator),
        operand: operandFromProto(c.operand),
      })),
    })),
  };
}

function fieldRefToProto(r: FieldRef | null | undefined): segmentV1.SegmentFieldRef | undefined {
  if (!r) return undefined;
  return r.type === 'BUILT_IN'
    ? { type: FieldRefTypes.toProto('BUILT_IN'), builtInField: BuiltInFields.toProto(r.builtInField) }
    : { type: FieldRefTypes.toProto('CUSTOM'), fieldId: r.fieldId };
}

function purchaseToProto(p: PurchaseSegmentCondition | null | undefined): segmentV1.PurchaseSegmentCondition | undefined {
  if (!p) return undefined;
  return {
    sourceId: orUndef(p.sourceId),
    scopeKind: ScopeKinds.toProto(p.scopeKind),
    products: (p.products ?? []).map((x) => ({ productId: x.productId, variantId: orUndef(x.variantId) })),
    groupId: orUndef(p.groupId),
    period: p.period ? { kind: PeriodKinds.toProto(p.period.kind), days: orUndef(p.period.days), from: orUndef(p.period.from), to: orUndef(p.period.to) } : undefined,
    count: orUndef(p.count),
    currency: orUndef(p.currency),
    amount: orUndef(p.amount),
    couponCode: orUndef(p.couponCode),
    timeZoneId: orUndef(p.timeZoneId),
  };
}

function operandToProto(o: SegmentOperand): segmentV1.SegmentOperand {
  return {
    kind: OperandKinds.toProto(o.kind),
    text: orUndef(o.text),
    number: orUndef(o.number),
    date: orUndef(o.date),
    optionIds: o.optionIds ?? [],
    segmentId: orUndef(o.segmentId),
    purchase: purchaseToProto(o.purchase),
  };
}

function conditionToProto(c: SegmentCondition): segmentV1.SegmentCondition {
  return {
    subjectType: SubjectTypes.toProto(c.subjectType),
    fieldRef: fieldRefToProto(c.fieldRef),
    operator: Operators.toProto(c.operator),
    operand: operandToProto(c.operand),
  };
}

export function expressionToProto(e: SegmentExpression): segmentV1.SegmentExpression {
  return { conditionGroups: e.conditionGroups.map((g) => ({ conditions: g.conditions.map(conditionToProto) })) };
}

export function segmentToProto(s: SegmentDoc): segmentV1.Segment {
  return {
    id: s._id,
    name: s.name,
    expression: expressionToProto(s.expression),
    createdAt: new Date(s.createdAt).toISOString(),
    updatedAt: new Date(s.updatedAt).toISOString(),
  };
}
