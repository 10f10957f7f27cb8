import { DomainError, invalid } from '@mailer/kit';
import { planSync, syncEmails, assertSyncSize, type SyncRow } from '../src/domain/sync';
import type { SubscriberInput, SubscriberState } from '../src/domain/types';
import { definitions, errorIdOf, field, tag, uuid } from './helpers';

const company = field('TEXT');
const required = field('NUMBER', { required: true });
const vip = tag();
const ctx = definitions([company, required], [vip]);
const now = '2024-05-01T10:00:00.000Z';
let n = 0;
const newId = () => `new-${++n}`;
const row = (email: string, over: Partial<SubscriberInput> = {}): SubscriberInput => ({
  email,
  tags: [],
  fields: [{ fieldId: required.id, value: { kind: 'NUMBER', value: 1 } }],
  ...over,
});
const existingAnn: SubscriberState = {
  id: 'ann-id',
  email: 'ann@example.org',
  firstName: null,
  status: 'ACTIVE',
  tags: [],
  topicIds: [],
  optOuts: [],
  fields: { [required.id]: 1 },
  registeredAt: now,
  version: 4,
};
const existing = new Map([[existingAnn.email, existingAnn]]);

describe('planSync', () => {
  it('gives one result per row, in order; a bad row never spoils the others', () => {
    const rows: SyncRow[] = [
      row('new1@example.org', { tags: [vip.id] }),
      row('not an email'),
      row('Ann@Example.org', { firstName: 'Ann' }),
      row('new2@example.org', { tags: [uuid(555)] }),
      row('NEW1@example.org'),
      row('ann@example.org'),
      row('new3@example.org', { fields: [] }),
      row('new4@example.org', { fields: [{ fieldId: required.id, value: { kind: 'TEXT', value: 'x' } }] }),
      { unreadable: invalid('validation_failed', 'unknown subscriber status 99'), email: 'weird@example.org' },
    ];
    const plan = planSync(rows, 'UPSERT', ctx, existing, newId, now);
    expect(plan.results.map((r) => [r.index, r.email, r.outcome, r.errorId])).toEqual([
      [0, 'new1@example.org', 'CREATED', undefined],
      [1, 'not an email', 'FAILED', 'invalid_email'],
      [2, 'ann@example.org', 'UPDATED', undefined],
      [3, 'new2@example.org', 'FAILED', 'tag_not_found'],
      [4, 'new1@example.org', 'FAILED', 'duplicate_email_in_request'],
      [5, 'ann@example.org', 'FAILED', 'duplicate_email_in_request'],
      [6, 'new3@example.org', 'FAILED', 'required_field_missing'],
      [7, 'new4@example.org', 'FAILED', 'field_value_kind_mismatch'],
      [8, 'weird@example.org', 'FAILED', 'validation_failed'],
    ]);
    expect(plan.creates.map((c) => c.email)).toEqual(['new1@example.org']);
    expect(plan.updates).toHaveLength(1);
    expect(plan.updates[0].after).toMatchObject({ id: 'ann-id', firstName: 'Ann', version: 5 });
    expect(plan.results[0].subscriberId).toBe(plan.creates[0].id);
    expect(plan.results[2].subscriberId).toBe('ann-id');
    expect(plan.results.filter((r) => r.outcome === 'FAILED').every((r) => typeof r.message === 'string' && r.message.length > 0)).toBe(true);
  });

  it('answers UNCHANGED when the row holds nothing new (repeat = no-op)', () => {
    const plan = planSync([row('ann@example.org')], 'UPSERT', ctx, existing, newId, now);
    expect(plan.results).toEqual([{ index: 0, email: 'ann@example.org', subscriberId: 'ann-id', outcome: 'UNCHANGED' }]);
    expect(plan.updates).toEqual([]);
    expect(plan.creates).toEqual([]);
  });

  it('CREATE_ONLY fails existing emails with subscriber_email_exists; UPDATE_ONLY fails missing ones with subscriber_not_found', () => {
    const create = planSync([row('ann@example.org'), row('b@example.org')], 'CREATE_ONLY', ctx, existing, newId, now);
    expect(create.results.map((r) => [r.outcome, r.errorId])).toEqual([
      ['FAILED', 'subscriber_email_exists'],
      ['CREATED', undefined],
    ]);
    const update = planSync([row('ann@example.org', { firstName: 'A' }), row('b@example.org')], 'UPDATE_ONLY', ctx, existing, newId, now);
    expect(update.results.map((r) => [r.outcome, r.errorId])).toEqual([
      ['UPDATED', undefined],
      ['FAILED', 'subscriber_not_found'],
    ]);
  });

  it('refuses more than 1,000 rows as a whole (sync_too_many_rows)', () => {
    expect(errorIdOf(() => assertSyncSize(1001))).toBe('sync_too_many_rows');
    expect(() => assertSyncSize(1000)).not.toThrow();
    expect(errorIdOf(() => planSync(Array.from({ length: 1001 }, (_, i) => row(`r${i}@example.org`)), 'UPSERT', ctx, new Map(), newId, now))).toBe('sync_too_many_rows');
  });

  it('lists the canonical emails to look up, skipping invalid and unreadable rows', () => {
    expect(syncEmails([row(' A@B.org '), row('bad'), { unreadable: new DomainError(3, 'x', 'y'), email: 'c@d.org' }])).toEqual(['a@b.org']);
  });
});
