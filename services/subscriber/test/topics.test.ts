import { checkTopicDelete, checkTopicUpdate, initialTopics, joinTopics, optOutOfTopic, replaceTopics, subscriberTopicsView, validateOptOutSource, validateTopicDescription, validateTopicLabel, validateTopicRefs } from '../src/domain/topics';
import type { TopicDef } from '../src/domain/types';
import { errorIdOf, errorOf, topic, uuid } from './helpers';
import { GrpcStatus } from '@mailer/kit';

const [A, B, C] = [uuid(21), uuid(22), uuid(23)];
const at = '2024-05-01T10:00:00.000Z';

describe('topic validation', () => {
  const topics = new Map<string, TopicDef>([
    [A, topic({ id: A, isDefault: true })],
    [B, topic({ id: B })],
    [C, topic({ id: C, active: false })],
  ]);
  it('accepts existing active topics', () => expect(validateTopicRefs([B, A.toUpperCase()], topics)).toEqual([B, A]));
  it('answers topic_not_found, topic_inactive (INVALID_ARGUMENT), duplicate_ids, invalid_uuid', () => {
    expect(errorIdOf(() => validateTopicRefs([uuid(99)], topics))).toBe('topic_not_found');
    expect(errorOf(() => validateTopicRefs([A, C], topics))).toMatchObject({ errorId: 'topic_inactive', code: GrpcStatus.INVALID_ARGUMENT, details: [{ path: 'topicIds[1]', problem: 'topic is not active' }] });
    expect(errorIdOf(() => validateTopicRefs([A, A], topics))).toBe('duplicate_ids');
    expect(errorIdOf(() => validateTopicRefs(['x'], topics))).toBe('invalid_uuid');
  });
  it('joins the default topic when no topics were given, none when an empty list was given', () => {
    expect(initialTopics(undefined, topics)).toEqual([A]);
    expect(initialTopics([], topics)).toEqual([]);
    expect(initialTopics([B], topics)).toEqual([B]);
    expect(initialTopics(undefined, new Map())).toEqual([]);
  });
  it('checks labels, descriptions and opt-out sources', () => {
    expect(validateTopicLabel(' News ')).toBe('News');
    expect(errorIdOf(() => validateTopicLabel(' '))).toBe('validation_failed');
    expect(errorIdOf(() => validateTopicLabel('x'.repeat(256)))).toBe('validation_failed');
    expect(validateTopicDescription('  ')).toBeNull();
    expect(validateTopicDescription(undefined)).toBeNull();
    expect(errorIdOf(() => validateTopicDescription('x'.repeat(2001)))).toBe('validation_failed');
    expect(validateOptOutSource(undefined)).toBe('api');
    expect(validateOptOutSource(' preference-centre ')).toBe('preference-centre');
    expect(errorIdOf(() => validateOptOutSource(''))).toBe('validation_failed');
    expect(errorIdOf(() => validateOptOutSource('x'.repeat(101)))).toBe('validation_failed');
  });
});

describe('replaceTopics', () => {
  const current = { topicIds: [A, B], optOuts: [{ topicId: C, at, source: 'api' }] };
  it('makes the listed topics the subscriptions and unsubscribes the others without recording an opt-out', () => {
    expect(replaceTopics(current, [B], false)).toEqual({ topicIds: [B], optOuts: current.optOuts });
  });
  it('keeps a personal opt-out: the topic stays unsubscribed', () => {
    expect(replaceTopics(current, [A, C], false)).toEqual({ topicIds: [A], optOuts: current.optOuts });
  });
  it('with overrideOptOuts removes the opt-out and subscribes', () => {
    expect(replaceTopics(current, [A, C], true)).toEqual({ topicIds: [A, C], optOuts: [] });
  });
  it('with overrideOptOuts keeps opt-outs of topics not listed', () => {
    expect(replaceTopics(current, [A], true)).toEqual({ topicIds: [A], optOuts: current.optOuts });
  });
  it('an empty list unsubscribes everything', () => expect(replaceTopics(current, [], false).topicIds).toEqual([]));
});

describe('joinTopics and optOutOfTopic', () => {
  it('joins without overriding opt-outs', () => {
    expect(joinTopics({ topicIds: [B], optOuts: [{ topicId: C, at, source: 'api' }] }, [A, C]).topicIds).toEqual([A, B].sort());
  });
  it('records an opt-out with time and source and unsubscribes; a repeat keeps the first record', () => {
    const once = optOutOfTopic({ topicIds: [A, B], optOuts: [] }, A, at, 'form');
    expect(once).toEqual({ topicIds: [B], optOuts: [{ topicId: A, at, source: 'form' }] });
    expect(optOutOfTopic(once, A, '2030-01-01T00:00:00.000Z', 'api')).toEqual(once);
  });
});

describe('subscriberTopicsView', () => {
  it('lists every topic of the account with subscription and opt-out', () => {
    const topics = [topic({ id: A, label: 'News' }), topic({ id: B, label: 'Deals' }), topic({ id: C, label: 'Old', active: false })];
    expect(subscriberTopicsView(topics, { topicIds: [B], optOuts: [{ topicId: A, at, source: 'api' }] })).toEqual([
      { topicId: A, label: 'News', subscribed: false, optedOut: true, optedOutAt: at, optOutSource: 'api' },
      { topicId: B, label: 'Deals', subscribed: true, optedOut: false },
      { topicId: C, label: 'Old', subscribed: false, optedOut: false },
    ]);
  });
});

describe('default topic rules', () => {
  const def = topic({ isDefault: true });
  const other = topic();
  const inactive = topic({ active: false });
  it('the default cannot be dropped or deactivated (topic_is_default, FAILED_PRECONDITION)', () => {
    expect(errorOf(() => checkTopicUpdate(def, { isDefault: false }))).toMatchObject({ errorId: 'topic_is_default', code: GrpcStatus.FAILED_PRECONDITION });
    expect(errorIdOf(() => checkTopicUpdate(def, { active: false }))).toBe('topic_is_default');
    expect(() => checkTopicUpdate(def, { isDefault: true, active: true })).not.toThrow();
  });
  it('an inactive topic cannot become the default', () => {
    expect(errorIdOf(() => checkTopicUpdate(inactive, { isDefault: true }))).toBe('topic_inactive');
    expect(errorIdOf(() => checkTopicUpdate(other, { isDefault: true, active: false }))).toBe('topic_inactive');
    expect(() => checkTopicUpdate(other, { active: false })).not.toThrow();
  });
  it('the default is never deleted (every account keeps exactly one); other topics may be', () => {
    expect(errorIdOf(() => checkTopicDelete(def))).toBe('topic_is_default');
    expect(() => checkTopicDelete(other)).not.toThrow();
  });
});
