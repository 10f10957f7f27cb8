// A field value has one shape on the wire of the API (an object discriminated by `kind`) and one in
// proto (a oneof, the same cases in subscriber.v1.FieldValue and messaging's AutomationFieldValue).
// Both sides of every gRPC call convert between them here, and only here.

/** A field value as the API writes it; the kind must match the field's type. */
export type FieldValue =
  | { kind: 'TEXT'; text: string }
  | { kind: 'EMAIL'; text: string }
  | { kind: 'NUMBER'; number: number }
  | { kind: 'DATE'; date: string }
  | { kind: 'BOOLEAN'; booleanValue: boolean }
  | { kind: 'SINGLE_OPTION'; optionId: string }
  | { kind: 'MULTI_OPTION'; optionIds: string[] };

export type FieldValueKind = FieldValue['kind'];

/** The types of a custom field. */
export type FieldTypeName = 'TEXT' | 'LONG_TEXT' | 'EMAIL' | 'NUMBER' | 'DATE' | 'BOOLEAN' | 'SINGLE_CHOICE' | 'MULTI_CHOICE';

/** The one value kind each field type takes (a value of another kind is refused). */
export const KIND_OF_FIELD_TYPE: Readonly<Record<FieldTypeName, FieldValueKind>> = {
  TEXT: 'TEXT',
  LONG_TEXT: 'TEXT',
  EMAIL: 'EMAIL',
  NUMBER: 'NUMBER',
  DATE: 'DATE',
  BOOLEAN: 'BOOLEAN',
  SINGLE_CHOICE: 'SINGLE_OPTION',
  MULTI_CHOICE: 'MULTI_OPTION',
};

/** The oneof of a field value (`FieldValue.value`, `AutomationFieldValue.value`). */
export type FieldValueCase =
  | { $case: 'text'; value: string }
  | { $case: 'email'; value: string }
  | { $case: 'number'; value: number }
  | { $case: 'date'; value: string }
  | { $case: 'booleanValue'; value: boolean }
  | { $case: 'optionId'; value: string }
  | { $case: 'optionIds'; value: { ids: string[] } };

/** A value as its plain content: a string, number, boolean or option ids. */
export type FieldValueContent = string | number | boolean | string[];

const CASE_OF = { TEXT: 'text', EMAIL: 'email', NUMBER: 'number', DATE: 'date', BOOLEAN: 'booleanValue', SINGLE_OPTION: 'optionId', MULTI_OPTION: 'optionIds' } as const;
const KIND_OF: Record<FieldValueCase['$case'], FieldValueKind> = {
  text: 'TEXT',
  email: 'EMAIL',
  number: 'NUMBER',
  date: 'DATE',
  booleanValue: 'BOOLEAN',
  optionId: 'SINGLE_OPTION',
  optionIds: 'MULTI_OPTION',
};
/** The API member that holds each kind's content (EMAIL is written in `text`). */
const MEMBER_OF = { TEXT: 'text', EMAIL: 'text', NUMBER: 'number', DATE: 'date', BOOLEAN: 'booleanValue', SINGLE_OPTION: 'optionId', MULTI_OPTION: 'optionIds' } as const;

/** The content of an API value. */
export function contentOf(v: FieldValue): FieldValueContent {
  return (v as Record<string, FieldValueContent>)[MEMBER_OF[v.kind]];
}

/** The API value of a kind and its content (the caller knows the content fits the kind). */
export function fieldValueOf(kind: FieldValueKind, content: FieldValueContent): FieldValue {
  return { kind, [MEMBER_OF[kind]]: content } as FieldValue;
}

/** The proto oneof of a kind and its content. */
export function caseOf(kind: FieldValueKind, content: FieldValueContent): FieldValueCase {
  return { $case: CASE_OF[kind], value: kind === 'MULTI_OPTION' ? { ids: content as string[] } : content } as FieldValueCase;
}

/** The kind and content of a proto oneof; undefined when the oneof is unset. */
export function kindOfCase(c: FieldValueCase | undefined): { kind: FieldValueKind; content: FieldValueContent } | undefined {
  if (!c || !(c.$case in KIND_OF)) return undefined;
  return { kind: KIND_OF[c.$case], content: c.$case === 'optionIds' ? c.value.ids : c.value };
}

/** API value -> proto oneof. */
export const fieldValueToCase = (v: FieldValue): FieldValueCase => caseOf(v.kind, contentOf(v));

/** Proto oneof -> API value; undefined when the oneof is unset. */
export function fieldValueFromCase(c: FieldValueCase | undefined): FieldValue | undefined {
  const v = kindOfCase(c);
  return v && fieldValueOf(v.kind, v.content);
}
