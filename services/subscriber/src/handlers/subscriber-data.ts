// SubscriberService RPCs of a subscriber's data, topics and field values: each parses its request and
// calls its use case in app/subscriber-data.ts, app/subscriber-topics.ts or app/field-values.ts.
import { accountOf, type AsyncHandlers } from '@mailer/kit';
import type { subscriberV1 } from '@mailer/proto';
import type { Deps } from '../app/deps';
import * as values from '../app/field-values';
import * as data from '../app/subscriber-data';
import type { SubscriberWithDefinitions } from '../app/subscriber-change';
import * as topics from '../app/subscriber-topics';
import { parseId } from '../domain/ids';
import type { SubscriberTopicView } from '../domain/topics';
import { validateOptOutSource } from '../domain/topics';
import { parseValueFieldId } from '../domain/values';
import { fieldEntriesToProto, fieldInputsFromProto, statusFromProto, subscriberDataToProto, topicViewToProto, valueFromProto, valueToProto } from './mapping';

type SubscriberDataRpcs =
  | 'getSubscriberData'
  | 'replaceSubscriberData'
  | 'replaceSubscriberEmail'
  | 'replaceSubscriberFirstName'
  | 'replaceSubscriberStatus'
  | 'getSubscriberTopics'
  | 'replaceSubscriberTopics'
  | 'optOutOfTopic'
  | 'listFieldValues'
  | 'setFieldValue'
  | 'deleteFieldValue';

const dataResponse = ({ state, defs }: SubscriberWithDefinitions) => ({ data: subscriberDataToProto(state, defs.catalog) });
const topicsResponse = (view: SubscriberTopicView[]) => ({ topics: view.map(topicViewToProto) });
const subscriberIdOf = (req: { subscriberId: string }) => parseId(req.subscriberId, 'subscriberId');

export function subscriberDataHandlers(deps: Deps): Pick<AsyncHandlers<subscriberV1.SubscriberServiceServer>, SubscriberDataRpcs> {
  return {
    async getSubscriberData(req) {
      const accountId = accountOf(req);
      const { state, catalog } = await data.getSubscriberData(deps, { accountId, subscriberId: subscriberIdOf(req) });
      return { data: subscriberDataToProto(state, catalog) };
    },

    async replaceSubscriberData(req) {
      const accountId = accountOf(req);
      const status = statusFromProto(req.subscriberStatus);
      const subscriberId = subscriberIdOf(req);
      const input = { accountId, subscriberId, email: req.email, firstName: req.firstName ?? null, status, fields: fieldInputsFromProto(req.fields), tags: req.tags };
      return dataResponse(await data.replaceSubscriberData(deps, input));
    },

    async replaceSubscriberEmail(req) {
      const accountId = accountOf(req);
      return dataResponse(await data.replaceSubscriberEmail(deps, { accountId, subscriberId: subscriberIdOf(req), email: req.email }));
    },

    async replaceSubscriberFirstName(req) {
      const accountId = accountOf(req);
      return dataResponse(await data.replaceSubscriberFirstName(deps, { accountId, subscriberId: subscriberIdOf(req), firstName: req.firstName ?? null }));
    },

    async replaceSubscriberStatus(req) {
      const accountId = accountOf(req);
      const status = statusFromProto(req.subscriberStatus);
      return dataResponse(await data.replaceSubscriberStatus(deps, { accountId, subscriberId: subscriberIdOf(req), status }));
    },

    async getSubscriberTopics(req) {
      const accountId = accountOf(req);
      return topicsResponse(await topics.getSubscriberTopics(deps, { accountId, subscriberId: subscriberIdOf(req) }));
    },

    async replaceSubscriberTopics(req) {
      const accountId = accountOf(req);
      const input = { accountId, subscriberId: subscriberIdOf(req), topicIds: req.topicIds, overrideOptOuts: req.overrideOptOuts };
      return topicsResponse(await topics.replaceSubscriberTopics(deps, input));
    },

    async optOutOfTopic(req) {
      const accountId = accountOf(req);
      const topicId = parseId(req.topicId, 'topicId');
      const source = validateOptOutSource(req.source);
      return topicsResponse(await topics.optOutOfTopic(deps, { accountId, subscriberId: subscriberIdOf(req), topicId, source }));
    },

    async listFieldValues(req) {
      const accountId = accountOf(req);
      const { state, catalog } = await values.listFieldValues(deps, { accountId, subscriberId: subscriberIdOf(req) });
      return { values: fieldEntriesToProto(state, catalog) };
    },

    async setFieldValue(req) {
      const accountId = accountOf(req);
      const fieldId = parseValueFieldId(req.fieldId, 'fieldId');
      const value = valueFromProto(req.value);
      const { field, stored, catalog } = await values.setFieldValue(deps, { accountId, subscriberId: subscriberIdOf(req), fieldId, value });
      return { value: { fieldId, personalizationTagName: field.personalizationTagName, value: valueToProto(field, stored, catalog) } };
    },

    async deleteFieldValue(req) {
      const accountId = accountOf(req);
      const fieldId = parseValueFieldId(req.fieldId, 'fieldId');
      await values.deleteFieldValue(deps, { accountId, subscriberId: subscriberIdOf(req), fieldId });
      return {};
    },
  };
}
