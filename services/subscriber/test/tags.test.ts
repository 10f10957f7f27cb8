import { addTags, planTagAdd, planTagRemove, removeTags, validateTagName, validateTagRefs, type TaggingTarget } from '../src/domain/tags';
import { errorIdOf, uuid } from './helpers';

describe('validateTagName', () => {
  it('trims and keys names ignoring case', () => expect(validateTagName('  VIP Customers ')).toEqual({ name: 'VIP Customers', key: 'vip customers' }));
  it.each(['', '   ', 'x'.repeat(101)])('refuses %p', (n) => expect(errorIdOf(() => validateTagName(n))).toBe('validation_failed'));
  it('accepts 100 characters', () => expect(validateTagName('x'.repeat(100)).name).toHaveLength(100));
});

describe('validateTagRefs', () => {
  const known = new Map([uuid(1), uuid(2)].map((id) => [id, id]));
  const lookup = (id: string) => known.get(id);
  it('answers the sorted known ids', () => expect(validateTagRefs([uuid(2), uuid(1).toUpperCase()], lookup)).toEqual([uuid(1), uuid(2)]));
  it('answers tag_not_found, duplicate_ids and invalid_uuid', () => {
    expect(errorIdOf(() => validateTagRefs([uuid(1), uuid(3)], lookup))).toBe('tag_not_found');
    expect(errorIdOf(() => validateTagRefs([uuid(1), uuid(1)], lookup))).toBe('duplicate_ids');
    expect(errorIdOf(() => validateTagRefs(['vip'], lookup))).toBe('invalid_uuid');
  });
  it('allows at most 1,000 tags', () => expect(errorIdOf(() => validateTagRefs(Array.from({ length: 1001 }, (_, i) => uuid(i + 1)), lookup))).toBe('validation_failed'));
});

describe('addTags / removeTags', () => {
  it('adds as a sorted set and removes', () => {
    expect(addTags(['b', 'd'], ['c', 'a', 'b'])).toEqual(['a', 'b', 'c', 'd']);
    expect(addTags(['a'], ['a'])).toEqual(['a']);
    expect(removeTags(['a', 'b', 'c'], ['b', 'x'])).toEqual(['a', 'c']);
  });
});

describe('bulk tagging counts', () => {
  const [t1, t2] = [uuid(11), uuid(12)];
  const s = (id: number, tags: string[], status: TaggingTarget['status'] = 'ACTIVE'): TaggingTarget => ({ id: uuid(id), status, tags });
  const found = [
    s(1, []), // gets both
    s(2, [t1]), // gets t2
    s(3, [t1, t2]), // has all
    s(4, [t2], 'UNSUBSCRIBED'), // not skipped: only BLOCKED and unknown are
    s(5, [], 'BLOCKED'),
    s(6, [t1, t2], 'BLOCKED'),
  ];
  const selected = [1, 2, 3, 4, 5, 6, 7, 8].map((i) => uuid(i)); // 7, 8 do not exist

  it('add: tagged got at least one new tag, alreadyTagged had all, skipped by NOT_FOUND and BLOCKED', () => {
    const { result, changes } = planTagAdd(selected, found, [t1, t2]);
    expect(result).toEqual({
      selectedSubscriberCount: 8,
      taggedSubscriberCount: 3,
      alreadyTaggedSubscriberCount: 1,
      skippedSubscriberCount: 4,
      skippedByStatus: { BLOCKED: 2, NOT_FOUND: 2 },
    });
    expect(changes).toEqual([
      { id: uuid(1), tags: [t1, t2], added: [t1, t2], removed: [] },
      { id: uuid(2), tags: [t1, t2], added: [t2], removed: [] },
      { id: uuid(4), tags: [t1, t2], added: [t1], removed: [] },
    ]);
    expect(result.taggedSubscriberCount + result.alreadyTaggedSubscriberCount + result.skippedSubscriberCount).toBe(result.selectedSubscriberCount);
  });

  it('remove: updated lost at least one tag, withoutSelectedTags had none', () => {
    const { result, changes } = planTagRemove(selected, found, [t2]);
    expect(result).toEqual({
      selectedSubscriberCount: 8,
      updatedSubscriberCount: 2,
      withoutSelectedTagsSubscriberCount: 2,
      skippedSubscriberCount: 4,
      skippedByStatus: { BLOCKED: 2, NOT_FOUND: 2 },
    });
    expect(changes.map((c) => [c.id, c.tags, c.removed])).toEqual([
      [uuid(3), [t1], [t2]],
      [uuid(4), [], [t2]],
    ]);
  });

  it('reports no skipped statuses when nothing is skipped', () => {
    expect(planTagAdd([uuid(1)], found, [t1]).result.skippedByStatus).toEqual({});
  });
});
