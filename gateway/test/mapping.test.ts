import { commonV1, subscriberV1 } from '@mailer/proto';
import {
  addFieldToProto,
  addTopicToProto,
  fieldCatalogJson,
  fieldFormsJson,
  fieldJson,
  fieldUsageReportJson,
  tagJson,
  topicJson,
  updateFieldToProto,
  updateTopicToProto,
} from '../src/mapping/catalog';
import { BuiltInFields, FieldTypes, FieldUsageCategories, SubscriberStatuses, SyncModes, SyncOutcomes } from '../src/mapping/enums';
import {
  fieldValueEntryJson,
  fieldValueInputFromProto,
  fieldValueInputToProto,
  fieldValueRequestFromProto,
  fieldValueResponseFromProto,
  fieldValueToProto,
} from '../src/mapping/field-values';
import { int64, present } from '../src/mapping/numbers';
import {
  addSubscriberToProto,
  listSubscribersToProto,
  pageJson,
  replaceSubscriberDataToProto,
  replaceSubscriberTopicsToProto,
  statusCountsJson,
  subscriberDataJson,
  subscriberJson,
  subscriberTopicsJson,
  syncResultsJson,
  syncToProto,
  taggingAddResultJson,
  taggingRemovalResultJson,
  taggingToProto,
} from '../src/mapping/subscribers';
import type { Schemas } from '../src/openapi/types';
import { schemaErrors } from '../src/openapi/validator';

// The request and response mappers between the API's JSON and the subscriber service's messages.

const A = '3f0c2a5e-2a7b-4c47-9a43-1d8f3a0e6b21';
const B = '7d9e6c1a-0b4f-4d2e-8a3c-5f6e7d8c9b0a';
const S = subscriberV1.SubscriberStatus;

describe('protoEnum (@mailer/kit) on every enum the gateway maps', () => {
  it('names are the members without prefix, UNSPECIFIED and UNRECOGNIZED left out, in numeric order', () => {
    expect(SubscriberStatuses.names).toEqual(['UNCONFIRMED', 'ACTIVE', 'UNSUBSCRIBED', 'BOUNCED', 'COMPLAINED', 'BLOCKED']);
    expect(FieldTypes.names).toEqual(['TEXT', 'LONG_TEXT', 'EMAIL', 'NUMBER', 'DATE', 'BOOLEAN', 'SINGLE_CHOICE', 'MULTI_CHOICE']);
    expect(BuiltInFields.names).toEqual(['EMAIL', 'FIRST_NAME']);
    expect(SyncModes.names).toEqual(['UPSERT', 'CREATE_ONLY', 'UPDATE_ONLY']);
    expect(SyncOutcomes.names).toEqual(['CREATED', 'UPDATED', 'UNCHANGED', 'FAILED']);
    expect(FieldUsageCategories.names).toEqual(['FORM', 'AUTOMATION', 'SEGMENT', 'PURCHASE_CONNECTION', 'IMPORT', 'SEND_FILTER', 'CONTENT_MERGE_TAG', 'SEND_IN_PROGRESS', 'EXTERNAL_HINT']);
  });

  it('round-trips every member of every enum', () => {
    for (const e of [SubscriberStatuses, FieldTypes, BuiltInFields, SyncModes, SyncOutcomes, FieldUsageCategories] as Array<{ names: readonly string[]; toProto(n: string): number; fromProto(v: number): string }>) {
      for (const name of e.names) expect(e.fromProto(e.toProto(name))).toBe(name);
    }
    expect(SubscriberStatuses.toProto('BLOCKED')).toBe(S.SUBSCRIBER_STATUS_BLOCKED);
    expect(FieldTypes.fromProto(subscriberV1.FieldType.FIELD_TYPE_MULTI_CHOICE)).toBe('MULTI_CHOICE');
  });

  it('UNSPECIFIED, UNRECOGNIZED and unknown values from a service are errors (500), never shown', () => {
    expect(() => SubscriberStatuses.fromProto(S.SUBSCRIBER_STATUS_UNSPECIFIED)).toThrow(/no API name/);
    expect(() => SubscriberStatuses.fromProto(S.UNRECOGNIZED)).toThrow();
    expect(() => FieldTypes.fromProto(99)).toThrow();
    expect(() => (SubscriberStatuses.toProto as (n: string) => number)('NOPE')).toThrow();
  });

  it('an absent name is UNSPECIFIED (proto3 "not given")', () => {
    expect(SubscriberStatuses.toProtoOrUnspecified(undefined)).toBe(S.SUBSCRIBER_STATUS_UNSPECIFIED);
    expect(SubscriberStatuses.toProtoOrUnspecified('ACTIVE')).toBe(S.SUBSCRIBER_STATUS_ACTIVE);
  });
});

describe('int64 strings -> JSON numbers', () => {
  it('converts decimal strings, the proto3 default "" is 0', () => {
    expect(int64('0')).toBe(0);
    expect(int64('123456789012')).toBe(123456789012);
    expect(int64('')).toBe(0);
    expect(int64(undefined)).toBe(0);
    expect(int64(String(Number.MAX_SAFE_INTEGER))).toBe(Number.MAX_SAFE_INTEGER);
  });
  it('refuses what would be a wrong number', () => {
    expect(() => int64('9007199254740993')).toThrow(/2\^53/);
    expect(() => int64('1e3')).toThrow();
    expect(() => int64('12x')).toThrow();
  });
  it('present() refuses a missing message member', () => {
    expect(present(0, 'x')).toBe(0);
    expect(() => present(undefined, 'the subscriber')).toThrow(/without the subscriber/);
  });
});

describe('field values: every kind both ways', () => {
  const cases: Array<[Schemas['FieldValueRequest'], subscriberV1.FieldValue['value']]> = [
    [{ kind: 'TEXT', text: 'hello' }, { $case: 'text', value: 'hello' }],
    [{ kind: 'EMAIL', text: 'a@b.org' }, { $case: 'email', value: 'a@b.org' }],
    [{ kind: 'NUMBER', number: -1.5 }, { $case: 'number', value: -1.5 }],
    [{ kind: 'DATE', date: '2024-02-29' }, { $case: 'date', value: '2024-02-29' }],
    [{ kind: 'BOOLEAN', booleanValue: false }, { $case: 'booleanValue', value: false }],
    [{ kind: 'SINGLE_OPTION', optionId: A }, { $case: 'optionId', value: A }],
    [{ kind: 'MULTI_OPTION', optionIds: [A, B] }, { $case: 'optionIds', value: { ids: [A, B] } }],
  ];

  it.each(cases)('%p <-> proto', (request, proto) => {
    expect(fieldValueToProto(request)).toEqual({ value: proto, labels: [] });
    expect(fieldValueRequestFromProto({ value: proto, labels: [] })).toEqual(request);
    expect(schemaErrors('FieldValueRequest', request)).toEqual([]);
  });

  it('responses add labels to the option kinds only', () => {
    expect(fieldValueResponseFromProto({ value: { $case: 'optionId', value: A }, labels: ['Red'] })).toEqual({ kind: 'SINGLE_OPTION', optionId: A, labels: ['Red'] });
    expect(fieldValueResponseFromProto({ value: { $case: 'optionIds', value: { ids: [A, B] } }, labels: ['Red', 'Blue'] })).toEqual({
      kind: 'MULTI_OPTION',
      optionIds: [A, B],
      labels: ['Red', 'Blue'],
    });
    expect(fieldValueResponseFromProto({ value: { $case: 'text', value: 'x' }, labels: [] })).toEqual({ kind: 'TEXT', text: 'x' });
    for (const [, proto] of cases) {
      const json = fieldValueResponseFromProto({ value: proto, labels: ['L', 'M'].slice(0, proto?.$case === 'optionIds' ? 2 : 1) });
      expect(schemaErrors('FieldValueResponse', json)).toEqual([]);
    }
  });

  it('a value without a kind from the service is an error', () => {
    expect(() => fieldValueRequestFromProto({ value: undefined, labels: [] })).toThrow();
    expect(() => fieldValueRequestFromProto(undefined)).toThrow();
  });

  it('ids are lowercased on the way in', () => {
    expect(fieldValueToProto({ kind: 'SINGLE_OPTION', optionId: A.toUpperCase() }).value).toEqual({ $case: 'optionId', value: A });
    expect(fieldValueToProto({ kind: 'MULTI_OPTION', optionIds: [B.toUpperCase()] }).value).toEqual({ $case: 'optionIds', value: { ids: [B] } });
    expect(fieldValueInputToProto({ fieldId: A.toUpperCase(), value: { kind: 'NUMBER', number: 1 } })).toEqual({ fieldId: A, value: { value: { $case: 'number', value: 1 }, labels: [] } });
  });

  it('FieldValueInput and FieldValueEntry', () => {
    expect(fieldValueInputFromProto({ fieldId: A, value: { value: { $case: 'optionId', value: B }, labels: ['x'] } })).toEqual({ fieldId: A, value: { kind: 'SINGLE_OPTION', optionId: B } });
    const entry = fieldValueEntryJson({ fieldId: A, personalizationTagName: 'colour', value: { value: { $case: 'optionId', value: B }, labels: ['Red'] } });
    expect(entry).toEqual({ fieldId: A, personalizationTagName: 'colour', value: { kind: 'SINGLE_OPTION', optionId: B, labels: ['Red'] } });
    expect(schemaErrors('FieldValueEntry', entry)).toEqual([]);
  });
});

describe('subscriber mappers', () => {
  const protoSubscriber: subscriberV1.Subscriber = {
    id: A,
    email: 'ann@example.org',
    firstName: undefined,
    subscriberStatus: S.SUBSCRIBER_STATUS_UNCONFIRMED,
    values: [
      { fieldRef: { ref: { $case: 'builtInField', value: subscriberV1.BuiltInField.BUILT_IN_FIELD_EMAIL } }, personalizationTagName: 'email', label: 'Email', displayValue: 'ann@example.org' },
      { fieldRef: { ref: { $case: 'fieldId', value: B } }, personalizationTagName: 'age', label: 'Age', displayValue: '42' },
    ],
    tags: [B],
    registeredAt: '2024-01-01T00:00:00.000Z',
  };

  it('Subscriber: null firstName, field refs, optional members only when recorded', () => {
    const json = subscriberJson(protoSubscriber);
    expect(json).toEqual({
      id: A,
      email: 'ann@example.org',
      firstName: null,
      subscriberStatus: 'UNCONFIRMED',
      values: [
        { fieldRef: { type: 'BUILT_IN', builtInField: 'EMAIL' }, personalizationTagName: 'email', label: 'Email', displayValue: 'ann@example.org' },
        { fieldRef: { type: 'CUSTOM', fieldId: B }, personalizationTagName: 'age', label: 'Age', displayValue: '42' },
      ],
      tags: [B],
      registeredAt: '2024-01-01T00:00:00.000Z',
    });
    expect(schemaErrors('Subscriber', json)).toEqual([]);
    expect(subscriberJson({ ...protoSubscriber, lastImportedAtUtc: '2024-02-01T00:00:00.000Z', gdprAgreement: 'yes' })).toMatchObject({ lastImportedAtUtc: '2024-02-01T00:00:00.000Z', gdprAgreement: 'yes' });
  });

  it('AddSubscriber: absent members stay distinguishable (firstName null travels as "", which the service reads as none)', () => {
    expect(addSubscriberToProto('acc', { email: 'a@b.org' })).toEqual({
      accountId: 'acc',
      email: 'a@b.org',
      firstName: undefined,
      subscriberStatus: S.SUBSCRIBER_STATUS_UNSPECIFIED,
      fields: [],
      tags: [],
      topicIds: [],
      topicIdsGiven: false,
    });
    const full = addSubscriberToProto('acc', {
      email: 'a@b.org',
      firstName: null,
      subscriberStatus: 'BLOCKED',
      fields: [{ fieldId: A, value: { kind: 'TEXT', text: 't' } }],
      tags: [A.toUpperCase()],
      topicIds: [],
    });
    expect(full).toMatchObject({ firstName: '', subscriberStatus: S.SUBSCRIBER_STATUS_BLOCKED, tags: [A], topicIds: [], topicIdsGiven: true });
    expect(full.fields).toEqual([{ fieldId: A, value: { value: { $case: 'text', value: 't' }, labels: [] } }]);
    expect(addSubscriberToProto('acc', { email: 'a@b.org', topicIds: [B] })).toMatchObject({ topicIds: [B], topicIdsGiven: true });
  });

  it('list query and page: int64 counts as numbers, every status counted', () => {
    expect(listSubscribersToProto('acc', { pageNumber: 2, pageSize: 10, tagId: A.toUpperCase() })).toEqual({
      accountId: 'acc',
      pageNumber: 2,
      pageSize: 10,
      status: S.SUBSCRIBER_STATUS_UNSPECIFIED,
      tagId: A,
      topicId: undefined,
      search: undefined,
    });
    const counts = { unconfirmed: '1', active: '20000000000', unsubscribed: '0', bounced: '', complained: '3', blocked: '4' };
    expect(statusCountsJson(counts)).toEqual({ UNCONFIRMED: 1, ACTIVE: 20000000000, UNSUBSCRIBED: 0, BOUNCED: 0, COMPLAINED: 3, BLOCKED: 4 });
    const page = pageJson({ items: [{ id: A, email: 'a@b.org', subscriberStatus: S.SUBSCRIBER_STATUS_ACTIVE, tags: [], registeredAt: 'x' }], pageNumber: 1, pageSize: 50, totalItems: '1', totalPages: 1, statusCounts: counts });
    expect(page).toMatchObject({ totalItems: 1, items: [{ id: A, firstName: null, subscriberStatus: 'ACTIVE' }] });
  });

  it('SubscriberData both ways; firstName null clears', () => {
    const data = subscriberDataJson({
      subscriberId: A,
      email: 'a@b.org',
      firstName: 'Ann',
      subscriberStatus: S.SUBSCRIBER_STATUS_ACTIVE,
      fields: [{ fieldId: B, value: { value: { $case: 'optionIds', value: { ids: [A] } }, labels: ['Red'] } }],
      tags: [A, B],
    });
    expect(data).toEqual({ subscriberId: A, email: 'a@b.org', firstName: 'Ann', subscriberStatus: 'ACTIVE', fields: [{ fieldId: B, value: { kind: 'MULTI_OPTION', optionIds: [A] } }], tags: [A, B] });
    expect(schemaErrors('SubscriberData', data)).toEqual([]);
    const { subscriberId: _, ...replacement } = data;
    expect(schemaErrors('ReplaceSubscriberData', replacement)).toEqual([]); // what GET answers can be PUT back
    expect(replaceSubscriberDataToProto('acc', A, { ...replacement, firstName: null })).toEqual({
      accountId: 'acc',
      subscriberId: A,
      email: 'a@b.org',
      firstName: undefined,
      subscriberStatus: S.SUBSCRIBER_STATUS_ACTIVE,
      fields: [{ fieldId: B, value: { value: { $case: 'optionIds', value: { ids: [A] } }, labels: [] } }],
      tags: [A, B],
    });
    expect(() => subscriberDataJson(undefined)).toThrow();
  });

  it('subscriber topics: optedOutAt null unless opted out; the source stays internal', () => {
    const json = subscriberTopicsJson([
      { topicId: A, label: 'News', subscribed: true, optedOut: false },
      { topicId: B, label: 'Deals', subscribed: false, optedOut: true, optedOutAt: '2024-01-01T00:00:00.000Z', optOutSource: 'api' },
    ]);
    expect(json).toEqual({
      topics: [
        { topicId: A, label: 'News', subscribed: true, optedOut: false, optedOutAt: null },
        { topicId: B, label: 'Deals', subscribed: false, optedOut: true, optedOutAt: '2024-01-01T00:00:00.000Z' },
      ],
    });
    expect(schemaErrors('SubscriberTopics', json)).toEqual([]);
    expect(replaceSubscriberTopicsToProto('acc', A, { topicIds: [B.toUpperCase()], overrideOptOuts: true })).toEqual({ accountId: 'acc', subscriberId: A, topicIds: [B], overrideOptOuts: true });
  });

  it('bulk tagging results', () => {
    expect(taggingToProto('acc', { subscriberIds: [A.toUpperCase()], tagIds: [B] })).toEqual({ accountId: 'acc', subscriberIds: [A], tagIds: [B] });
    const added = taggingAddResultJson({ selectedSubscriberCount: 3, taggedSubscriberCount: 1, alreadyTaggedSubscriberCount: 0, skippedSubscriberCount: 2, skippedByStatus: { NOT_FOUND: 1, BLOCKED: 1 } });
    expect(added).toEqual({ selectedSubscriberCount: 3, taggedSubscriberCount: 1, alreadyTaggedSubscriberCount: 0, skippedSubscriberCount: 2, skippedByStatus: { NOT_FOUND: 1, BLOCKED: 1 } });
    expect(schemaErrors('SelectedSubscriberTaggingAddResult', added)).toEqual([]);
    const removed = taggingRemovalResultJson({ selectedSubscriberCount: 1, updatedSubscriberCount: 0, withoutSelectedTagsSubscriberCount: 1, skippedSubscriberCount: 0, skippedByStatus: {} });
    expect(removed).toEqual({ selectedSubscriberCount: 1, updatedSubscriberCount: 0, withoutSelectedTagsSubscriberCount: 1, skippedSubscriberCount: 0, skippedByStatus: {} });
    expect(schemaErrors('SelectedSubscriberTaggingRemovalResult', removed)).toEqual([]);
  });

  it('sync: refused rows stay out of the service request; results come back in the client\'s numbering', () => {
    const rows = [{ index: 0, row: { email: 'a@b.org' } }, { index: 2, row: { email: 'c@b.org', subscriberStatus: 'UNSUBSCRIBED' as const } }];
    const { request, indexes } = syncToProto('acc', 'CREATE_ONLY', rows);
    expect(request).toMatchObject({ accountId: 'acc', mode: subscriberV1.SyncMode.SYNC_MODE_CREATE_ONLY });
    expect(request.subscribers.map((r) => [r.email, r.subscriberStatus])).toEqual([['a@b.org', S.SUBSCRIBER_STATUS_UNSPECIFIED], ['c@b.org', S.SUBSCRIBER_STATUS_UNSUBSCRIBED]]);
    expect(indexes).toEqual([0, 2]);
    const O = subscriberV1.SyncOutcome;
    const json = syncResultsJson(
      {
        results: [
          { index: 1, email: 'c@b.org', outcome: O.SYNC_OUTCOME_FAILED, errorId: 'subscriber_email_exists', message: 'exists', subscriberId: B },
          { index: 0, email: 'a@b.org', outcome: O.SYNC_OUTCOME_CREATED, subscriberId: A },
        ],
      },
      indexes,
      [{ index: 1, email: 'bad', errorId: 'invalid_uuid', message: 'body.subscribers[1].tags[0] must be a UUID.' }],
    );
    expect(json).toEqual({
      results: [
        { index: 0, email: 'a@b.org', subscriberId: A, outcome: 'CREATED' },
        { index: 1, email: 'bad', subscriberId: null, outcome: 'FAILED', errorId: 'invalid_uuid', message: 'body.subscribers[1].tags[0] must be a UUID.' },
        { index: 2, email: 'c@b.org', subscriberId: B, outcome: 'FAILED', errorId: 'subscriber_email_exists', message: 'exists' },
      ],
    });
    expect(schemaErrors('SyncSubscribersResponse', json)).toEqual([]);
    // every row refused: the service is not asked
    expect(syncResultsJson(undefined, [], [{ index: 0, email: '', errorId: 'validation_failed', message: 'm' }]).results).toHaveLength(1);
    // a service that answers for rows it was not sent, or too few, is a bug
    expect(() => syncResultsJson({ results: [{ index: 5, email: '', outcome: O.SYNC_OUTCOME_CREATED }] }, [0], [])).toThrow();
    expect(() => syncResultsJson({ results: [] }, [0], [])).toThrow();
  });
});

describe('catalog mappers', () => {
  const F = subscriberV1.FieldType;
  const custom: subscriberV1.Field = {
    ref: { ref: { $case: 'fieldId', value: A } },
    personalizationTagName: 'colour',
    label: 'Colour',
    fieldType: F.FIELD_TYPE_SINGLE_CHOICE,
    required: true,
    internal: false,
    active: true,
    position: 2,
    options: [{ id: B, label: 'Red', position: 0, active: false }],
  };

  it('Field: fieldId only on custom fields, builtInField only on built-ins', () => {
    const json = fieldJson(custom);
    expect(json).toEqual({
      type: 'CUSTOM',
      fieldId: A,
      personalizationTagName: 'colour',
      label: 'Colour',
      fieldType: 'SINGLE_CHOICE',
      required: true,
      internal: false,
      active: true,
      position: 2,
      options: [{ id: B, label: 'Red', position: 0, active: false }],
    });
    expect(schemaErrors('Field', json)).toEqual([]);
    const builtIn = fieldJson({ ...custom, ref: { ref: { $case: 'builtInField', value: subscriberV1.BuiltInField.BUILT_IN_FIELD_FIRST_NAME } }, fieldType: F.FIELD_TYPE_TEXT, options: [], position: 1 });
    expect(builtIn).toEqual(expect.objectContaining({ type: 'BUILT_IN', builtInField: 'FIRST_NAME', fieldType: 'TEXT', options: [] }));
    expect(builtIn).not.toHaveProperty('fieldId');
    expect(schemaErrors('FieldCatalog', fieldCatalogJson([custom]))).toEqual([]);
    expect(() => fieldJson({ ...custom, ref: undefined })).toThrow();
  });

  it('AddField: an empty personalizationTagName means "derive"', () => {
    expect(addFieldToProto('acc', { personalizationTagName: '', label: 'L', fieldType: 'MULTI_CHOICE', required: false, internal: true, options: ['a'] })).toEqual({
      accountId: 'acc',
      personalizationTagName: undefined,
      label: 'L',
      fieldType: F.FIELD_TYPE_MULTI_CHOICE,
      required: false,
      internal: true,
      options: ['a'],
    });
    expect(addFieldToProto('acc', { personalizationTagName: 'x_1', label: 'L', fieldType: 'DATE', required: true, internal: false })).toMatchObject({ personalizationTagName: 'x_1', options: [] });
  });

  it('PATCH field: options_given tells "no change" from "[]"; new options have no id; defaults for position and active', () => {
    expect(updateFieldToProto('acc', A, { label: 'New' })).toEqual({
      accountId: 'acc',
      fieldId: A,
      label: 'New',
      required: undefined,
      internal: undefined,
      position: undefined,
      options: [],
      optionsGiven: false,
    });
    expect(updateFieldToProto('acc', A, { options: [] })).toMatchObject({ options: [], optionsGiven: true });
    expect(updateFieldToProto('acc', A, { required: false, options: [{ id: B.toUpperCase(), label: 'Red', active: false }, { id: null, label: 'Blue' }, { label: 'Green', position: 7 }] })).toMatchObject({
      required: false,
      optionsGiven: true,
      options: [
        { id: B, label: 'Red', position: 0, active: false },
        { id: undefined, label: 'Blue', position: 1, active: true },
        { id: undefined, label: 'Green', position: 7, active: true },
      ],
    });
  });

  it('FieldUsageReport: int64 count, categories by name, sources, no proto-only members', () => {
    const usage = {
      category: commonV1.FieldUsageCategory.FIELD_USAGE_CATEGORY_FORM,
      area: 'step 1',
      artifactId: B,
      artifactName: 'Signup',
      status: 'ACTIVE',
      reason: 'writes the field',
      link: '',
      permanentDeleteBlocking: true,
      effect: commonV1.FieldUsageEffect.FIELD_USAGE_EFFECT_BLOCKS_ARCHIVE,
    };
    const json = fieldUsageReportJson({
      fieldId: A,
      fieldLabel: 'Colour',
      personalizationTagName: 'colour',
      fieldType: F.FIELD_TYPE_SINGLE_CHOICE,
      subscriberValueCount: '12',
      archiveBlocked: true,
      permanentDeleteBlocked: true,
      blockingUsages: [usage],
      warningUsages: [],
      contentMergeTagUsages: [],
      permanentDeleteBlockingUsages: [usage],
      externalHints: [],
      sources: [{ service: 'form', answered: true }, { service: 'segment', answered: false, error: 'unavailable' }],
    });
    expect(json).toMatchObject({ subscriberValueCount: 12, fieldType: 'SINGLE_CHOICE', sources: [{ service: 'form', answered: true }, { service: 'segment', answered: false, error: 'unavailable' }] });
    expect(json.sources[0]).not.toHaveProperty('error');
    expect(json.blockingUsages[0]).toEqual({ category: 'FORM', area: 'step 1', artifactId: B, artifactName: 'Signup', status: 'ACTIVE', reason: 'writes the field', link: '', permanentDeleteBlocking: true });
    expect(schemaErrors('FieldUsageReport', json)).toEqual([]);
    expect(fieldFormsJson([{ id: B, name: 'Signup' }])).toEqual([{ id: B, name: 'Signup' }]);
  });

  it('Tag and Topic: int64 counts as numbers, description null when none', () => {
    const tag = tagJson({ id: A, name: 'VIP', subscriberCount: '3', createdAt: '2024-01-01T00:00:00.000Z' });
    expect(tag).toEqual({ id: A, name: 'VIP', subscriberCount: 3, createdAt: '2024-01-01T00:00:00.000Z' });
    expect(schemaErrors('Tag', tag)).toEqual([]);
    const topic = topicJson({ id: A, label: 'News', active: true, isDefault: true, subscriberCount: '0', createdAt: '2024-01-01T00:00:00.000Z' });
    expect(topic).toEqual({ id: A, label: 'News', description: null, active: true, isDefault: true, subscriberCount: 0, createdAt: '2024-01-01T00:00:00.000Z' });
    expect(schemaErrors('Topic', topic)).toEqual([]);
  });

  it('topics: AddTopic and PATCH (description null clears, absent leaves)', () => {
    expect(addTopicToProto('acc', { label: 'News', description: null, enrollExistingSubscribers: true })).toEqual({ accountId: 'acc', label: 'News', description: undefined, enrollExistingSubscribers: true, isDefault: false });
    expect(addTopicToProto('acc', { label: 'News', enrollExistingSubscribers: false, isDefault: true }).isDefault).toBe(true);
    expect(updateTopicToProto('acc', A, {})).toEqual({ accountId: 'acc', topicId: A, label: undefined, description: undefined, descriptionGiven: false, active: undefined, isDefault: undefined });
    expect(updateTopicToProto('acc', A, { description: null })).toMatchObject({ description: undefined, descriptionGiven: true });
    expect(updateTopicToProto('acc', A, { description: 'd', active: false, isDefault: true })).toMatchObject({ description: 'd', descriptionGiven: true, active: false, isDefault: true });
  });
});
