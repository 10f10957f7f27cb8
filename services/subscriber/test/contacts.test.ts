import { diffSubscriber, mergeSyncRow, newSubscriber, replaceData } from '../src/domain/contacts';
import type { SubscriberInput, SubscriberState } from '../src/domain/types';
import { definitions, errorIdOf, field, tag, topic, uuid } from './helpers';

const company = field('TEXT', { personalizationTagName: 'company' });
const plan = field('SINGLE_CHOICE', { personalizationTagName: 'plan' });
const vip = tag();
const other = tag();
const news = topic({ isDefault: true });
const deals = topic();
const ctx = definitions([company, plan], [vip, other], [news, deals]);
const now = '2024-05-01T10:00:00.000Z';
const input = (over: Partial<SubscriberInput> = {}): SubscriberInput => ({ email: 'Ann@Example.org', tags: [], fields: [], ...over });

describe('newSubscriber', () => {
  it('builds a complete subscriber: canonical email, default status ACTIVE, default topic, version 1', () => {
    expect(newSubscriber(input({ firstName: ' Ann ', tags: [vip.id], fields: [{ fieldId: company.id, value: { kind: 'TEXT', value: 'ACME' } }] }), ctx, 'id-1', now)).toEqual({
      id: 'id-1',
      email: 'ann@example.org',
      firstName: 'Ann',
      status: 'ACTIVE',
      tags: [vip.id],
      topicIds: [news.id],
      optOuts: [],
      fields: { [company.id]: 'ACME' },
      registeredAt: now,
      version: 1,
    });
  });
  it('joins the given topics instead of the default; an empty given list joins none', () => {
    expect(newSubscriber(input({ topicIds: [deals.id] }), ctx, 'x', now).topicIds).toEqual([deals.id]);
    expect(newSubscriber(input({ topicIds: [] }), ctx, 'x', now).topicIds).toEqual([]);
  });
  it.each([
    [{ email: 'nope' }, 'invalid_email'],
    [{ status: 'BOUNCED' as const }, 'subscriber_status_not_manual'],
    [{ tags: [uuid(777)] }, 'tag_not_found'],
    [{ tags: [vip.id, vip.id] }, 'duplicate_ids'],
    [{ topicIds: [uuid(778)] }, 'topic_not_found'],
    [{ fields: [{ fieldId: uuid(779), value: { kind: 'TEXT' as const, value: 'x' } }] }, 'field_not_found'],
    [{ fields: [{ fieldId: company.id, value: { kind: 'NUMBER' as const, value: 1 } }] }, 'field_value_kind_mismatch'],
    [{ firstName: 'x'.repeat(256) }, 'validation_failed'],
  ])('refuses %p with %s', (over, errorId) => expect(errorIdOf(() => newSubscriber(input(over), ctx, 'x', now))).toBe(errorId));

  it('enforces required fields on create', () => {
    const required = field('TEXT', { required: true });
    expect(errorIdOf(() => newSubscriber(input(), definitions([required]), 'x', now))).toBe('required_field_missing');
  });
});

const existing: SubscriberState = {
  id: 'sub-1',
  email: 'ann@example.org',
  firstName: 'Ann',
  status: 'UNCONFIRMED',
  tags: [vip.id],
  topicIds: [],
  optOuts: [{ topicId: deals.id, at: now, source: 'api' }],
  fields: { [company.id]: 'ACME' },
  registeredAt: now,
  version: 3,
};

describe('mergeSyncRow', () => {
  it('changes nothing for a row that carries the same data (idempotent)', () => {
    const merged = mergeSyncRow(existing, input({ firstName: 'Ann', tags: [vip.id], fields: [{ fieldId: company.id, value: { kind: 'TEXT', value: 'ACME' } }] }), ctx);
    expect(diffSubscriber(existing, merged).changed).toBe(false);
  });
  it('keeps members the row does not carry, replaces given values, adds tags, joins topics except opted-out ones', () => {
    const merged = mergeSyncRow(existing, input({ tags: [other.id], topicIds: [news.id, deals.id], fields: [{ fieldId: plan.id, value: { kind: 'SINGLE_OPTION', value: plan.options[0].id } }] }), ctx);
    expect(merged).toMatchObject({ firstName: 'Ann', status: 'UNCONFIRMED', tags: [vip.id, other.id].sort(), topicIds: [news.id], fields: { [company.id]: 'ACME', [plan.id]: plan.options[0].id } });
    expect(diffSubscriber(existing, merged)).toEqual({
      changed: true,
      parts: ['tags', 'topics', 'fields'],
      tagsAdded: [other.id],
      tagsRemoved: [],
      topicsAdded: [news.id],
      topicsRemoved: [],
      fieldIds: [plan.id],
    });
  });
  it('sets manual statuses only; UNCONFIRMED cannot be set on an existing subscriber', () => {
    expect(mergeSyncRow(existing, input({ status: 'ACTIVE' }), ctx).status).toBe('ACTIVE');
    expect(errorIdOf(() => mergeSyncRow(existing, input({ status: 'UNCONFIRMED' }), ctx))).toBe('subscriber_status_not_manual');
  });
  it('clears the first name when the row carries null', () => expect(mergeSyncRow(existing, input({ firstName: null }), ctx).firstName).toBeNull());
  it('does not enforce required fields on update', () => {
    const required = field('TEXT', { required: true });
    expect(() => mergeSyncRow(existing, input(), definitions([company, required]))).not.toThrow();
  });
});

describe('replaceData', () => {
  const req = { email: 'new@example.org', firstName: null, status: 'BLOCKED' as const, fields: [], tags: [other.id] };
  it('replaces everything replaceable, leaves topics and opt-outs alone', () => {
    expect(replaceData(existing, req, ctx)).toEqual({ ...existing, email: 'new@example.org', firstName: null, status: 'BLOCKED', fields: {}, tags: [other.id] });
  });
  it('requires a manual status', () => {
    expect(errorIdOf(() => replaceData(existing, { ...req, status: undefined }, ctx))).toBe('validation_failed');
    expect(errorIdOf(() => replaceData(existing, { ...req, status: 'COMPLAINED' }, ctx))).toBe('subscriber_status_not_manual');
  });
  it('enforces required fields (the complete set must hold them)', () => {
    const required = field('TEXT', { required: true });
    expect(errorIdOf(() => replaceData(existing, req, definitions([required], [other])))).toBe('required_field_missing');
  });
});

describe('diffSubscriber', () => {
  it('names every changed part', () => {
    const after: SubscriberState = { ...existing, email: 'x@example.org', firstName: null, status: 'ACTIVE', tags: [], topicIds: [news.id], optOuts: [], fields: {} };
    expect(diffSubscriber(existing, after)).toMatchObject({
      parts: ['email', 'firstName', 'status', 'tags', 'topics', 'optOuts', 'fields'],
      tagsRemoved: [vip.id],
      topicsAdded: [news.id],
      fieldIds: [company.id],
    });
  });
  it('treats multi-option values by content', () => {
    const a = { ...existing, fields: { f: ['1', '2'] } };
    expect(diffSubscriber(a, { ...a, fields: { f: ['1', '2'] } }).changed).toBe(false);
    expect(diffSubscriber(a, { ...a, fields: { f: ['1'] } }).fieldIds).toEqual(['f']);
  });
});
