import { parseId, parseIdList } from '../src/domain/ids';
import { errorIdOf, errorOf, uuid } from './helpers';

describe('parseId', () => {
  it('accepts UUIDs in any case and answers them lowercased', () => {
    expect(parseId('AAAAAAAA-BBBB-4CCC-8DDD-EEEEEEEEEEEE', 'id')).toBe('aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee');
  });
  it.each(['', 'x', '123', 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeee', 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeeeg', ' aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee', 'aaaaaaaabbbb4ccc8dddeeeeeeeeeeee'])(
    'refuses %p with invalid_uuid naming the path',
    (raw) => expect(errorOf(() => parseId(raw, 'tags[3]'))).toMatchObject({ errorId: 'invalid_uuid', details: [{ path: 'tags[3]', problem: 'not a UUID' }] }),
  );
});

describe('parseIdList', () => {
  it('keeps request order', () => expect(parseIdList([uuid(2), uuid(1)], 'ids', 10)).toEqual([uuid(2), uuid(1)]));
  it('refuses duplicates (also differing only in case) with duplicate_ids', () => {
    expect(errorIdOf(() => parseIdList([uuid(1), uuid(2), uuid(1)], 'ids', 10))).toBe('duplicate_ids');
    expect(errorIdOf(() => parseIdList(['AAAAAAAA-BBBB-4CCC-8DDD-EEEEEEEEEEEE', 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee'], 'ids', 10))).toBe('duplicate_ids');
  });
  it('refuses more than max and fewer than min with validation_failed', () => {
    expect(errorIdOf(() => parseIdList([uuid(1), uuid(2)], 'ids', 1))).toBe('validation_failed');
    expect(errorIdOf(() => parseIdList([], 'ids', 5, { min: 1 }))).toBe('validation_failed');
  });
  it('reports a malformed entry before duplicates', () => expect(errorIdOf(() => parseIdList([uuid(1), uuid(1), 'nope'], 'ids', 10))).toBe('invalid_uuid'));
});
