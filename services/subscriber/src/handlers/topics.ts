// SubscriberService RPCs of topics: each parses its request and calls its use case in app/topics.ts.
import { accountOf, type AsyncHandlers } from '@mailer/kit';
import type { subscriberV1 } from '@mailer/proto';
import type { Deps } from '../app/deps';
import * as topics from '../app/topics';
import { parseId } from '../domain/ids';
import { validateTopicDescription, validateTopicLabel } from '../domain/topics';
import { topicToProto } from './mapping';

type TopicRpcs = 'listTopics' | 'addTopic' | 'getTopic' | 'updateTopic' | 'deleteTopic';

const toProto = (t: topics.CountedTopic) => topicToProto(t.topic, t.subscriberCount);

export function topicHandlers(deps: Deps): Pick<AsyncHandlers<subscriberV1.SubscriberServiceServer>, TopicRpcs> {
  return {
    async listTopics(req) {
      return { items: (await topics.listTopics(deps, { accountId: accountOf(req) })).map(toProto) };
    },

    async addTopic(req) {
      const accountId = accountOf(req);
      const label = validateTopicLabel(req.label);
      const description = validateTopicDescription(req.description);
      const topic = await topics.addTopic(deps, { accountId, label, description, isDefault: req.isDefault, enrollExistingSubscribers: req.enrollExistingSubscribers });
      return { topic: toProto(topic) };
    },

    async getTopic(req) {
      const accountId = accountOf(req);
      return { topic: toProto(await topics.getTopic(deps, { accountId, topicId: parseId(req.topicId, 'topicId') })) };
    },

    async updateTopic(req) {
      const accountId = accountOf(req);
      const topicId = parseId(req.topicId, 'topicId');
      const label = req.label === undefined ? undefined : validateTopicLabel(req.label);
      const description = req.descriptionGiven || req.description !== undefined ? validateTopicDescription(req.description) : undefined;
      return { topic: toProto(await topics.updateTopic(deps, { accountId, topicId, label, description, active: req.active, isDefault: req.isDefault })) };
    },

    async deleteTopic(req) {
      const accountId = accountOf(req);
      await topics.deleteTopic(deps, { accountId, topicId: parseId(req.topicId, 'topicId') });
      return {};
    },
  };
}
