// Use cases of a subscriber's topics: GetSubscriberTopics, ReplaceSubscriberTopics, OptOutOfTopic.
import { optOutOfTopic as optOut, replaceTopics, subscriberTopicsView, validateTopicRefs, type SubscriberTopicView } from '../domain/topics';
import { ensureDefaultTopic } from './default-topic';
import { loadDefinitions } from './definitions';
import type { Deps } from './deps';
import { topicNotFound } from './not-found';
import { changeSubscriber, existingSubscriber, type SubscriberWithDefinitions } from './subscriber-change';

interface Target {
  accountId: string;
  subscriberId: string;
}

/** Every topic of the account with the subscriber's membership and opt-out. */
const topicsView = ({ state, defs }: SubscriberWithDefinitions): SubscriberTopicView[] => subscriberTopicsView([...defs.topics.values()], state);

export async function getSubscriberTopics(deps: Deps, input: Target): Promise<SubscriberTopicView[]> {
  await ensureDefaultTopic(deps, input.accountId);
  const [state, defs] = await Promise.all([existingSubscriber(deps, input.accountId, input.subscriberId), loadDefinitions(deps, input.accountId)]);
  return topicsView({ state, defs });
}

export async function replaceSubscriberTopics(deps: Deps, input: Target & { topicIds: string[]; overrideOptOuts: boolean }): Promise<SubscriberTopicView[]> {
  return topicsView(
    await changeSubscriber(deps, input.accountId, input.subscriberId, (current, defs) => ({
      ...current,
      ...replaceTopics(current, validateTopicRefs(input.topicIds, defs.topics), input.overrideOptOuts),
    })),
  );
}

/** `source` as domain/topics validateOptOutSource gives it. */
export async function optOutOfTopic(deps: Deps, input: Target & { topicId: string; source: string }): Promise<SubscriberTopicView[]> {
  const { topicId, source } = input;
  return topicsView(
    await changeSubscriber(deps, input.accountId, input.subscriberId, (current, defs, now) => {
      if (!defs.topics.has(topicId)) throw topicNotFound(topicId);
      return { ...current, ...optOut(current, topicId, now, source) };
    }),
  );
}
