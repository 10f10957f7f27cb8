// The subscriber domain's vocabulary, independent of protobuf and of storage.
import type { SubscriberStatus } from './subscriber';

export const FIELD_TYPES = ['TEXT', 'LONG_TEXT', 'EMAIL', 'NUMBER', 'DATE', 'BOOLEAN', 'SINGLE_CHOICE', 'MULTI_CHOICE'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

/** FieldValueKind of the specification: the discriminator of a field value. */
export type ValueKind = 'TEXT' | 'EMAIL' | 'NUMBER' | 'DATE' | 'BOOLEAN' | 'SINGLE_OPTION' | 'MULTI_OPTION';

/**
 * A field value as stored: the bare value, its kind follows from the field's type (which never
 * changes). TEXT/EMAIL/DATE/SINGLE_OPTION: string; NUMBER: number; BOOLEAN: boolean;
 * MULTI_OPTION: option ids sorted. Bare values keep a million subscribers small in memory.
 */
export type StoredValue = string | number | boolean | string[];

/** A field value as a request carries it (kind + raw value), not yet validated. */
export interface ValueInput {
  kind: ValueKind;
  value: StoredValue;
}

export interface FieldValueInput {
  fieldId: string;
  value: ValueInput | undefined;
}

export interface FieldOption {
  id: string;
  label: string;
  position: number;
  active: boolean;
}

export interface FieldDef {
  id: string;
  label: string;
  personalizationTagName: string;
  fieldType: FieldType;
  required: boolean;
  internal: boolean;
  active: boolean;
  position: number;
  options: FieldOption[];
}

export interface TagDef {
  id: string;
  name: string;
  createdAt: string;
}

export interface TopicDef {
  id: string;
  label: string;
  description: string | null;
  active: boolean;
  isDefault: boolean;
  createdAt: string;
}

/** An explicit opt-out a reader expressed for one topic; kept until a topic replacement overrides it. */
export interface OptOut {
  topicId: string;
  at: string;
  source: string;
}

/** Everything that makes up one subscriber (the contact a projection rebuilds from events). */
export interface SubscriberState {
  id: string;
  email: string;
  firstName: string | null;
  status: SubscriberStatus;
  /** Sorted tag ids. */
  tags: string[];
  /** Current topic subscriptions, sorted. */
  topicIds: string[];
  optOuts: OptOut[];
  /** fieldId -> value. */
  fields: Record<string, StoredValue>;
  registeredAt: string;
  /** The consent given when the subscriber signed up through a form or a custom event's `consent` (absent otherwise). */
  consent?: Consent;
  /** Incremented by every change; domain events carry it so projections can drop stale ones. */
  version: number;
}

/**
 * Consent as a signup recorded it: the text shown and the form (a form signup), or the consent's
 * `source` and the event (a custom event's consent, the API contract "Events and automations"), and when it was given.
 */
export interface Consent {
  text: string;
  formId?: string;
  eventId?: string;
  at: string;
}

/** What a subscriber create / sync row / replacement asks for. `undefined` members were not given. */
export interface SubscriberInput {
  email: string;
  /** undefined: not given; null or blank: none. */
  firstName?: string | null;
  status?: SubscriberStatus;
  tags: string[];
  /** undefined: not given (create joins the default topic; sync update joins nothing). */
  topicIds?: string[];
  fields: FieldValueInput[];
}
