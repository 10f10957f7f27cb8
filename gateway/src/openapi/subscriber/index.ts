import { fieldParameters, fieldPaths, fieldSchemas } from './fields';
import { fieldValuePaths } from './field-values';
import { subscriberParameters, subscriberPaths, subscriberSchemas } from './subscribers';
import { tagParameters, tagPaths, tagSchemas } from './tags';
import { topicParameters, topicPaths, topicSchemas } from './topics';

/**
 * The subscriber domain of the OpenAPI document: subscribers, replaceable data, topics and field
 * values of one subscriber, bulk tagging, sync, the field catalogue, tags and topics (the API contract
 * section 3, served by the subscriber service). Limits in the schemas are the service's too, so
 * most bad input is answered by the gateway with the same errorId the service would give.
 */
export const subscriberDomainTags = [
  { name: 'Subscribers', description: 'Subscribers, their replaceable data, topics and field values; bulk tagging and sync.' },
  { name: 'Fields', description: 'The field catalogue: built-in and custom subscriber fields, their usage.' },
  { name: 'Tags', description: 'Tags: account-wide labels put on subscribers (one by one, in bulk or by sync).' },
  { name: 'Topics', description: 'Topics subscribers join; one of them is the account\'s default topic.' },
];

export const subscriberDomainPaths = { ...subscriberPaths, ...fieldValuePaths, ...fieldPaths, ...tagPaths, ...topicPaths };

// In the order the document has always published them (Email last).
export const subscriberDomainParameters = {
  SubscriberId: subscriberParameters.SubscriberId,
  ...fieldParameters,
  ...tagParameters,
  ...topicParameters,
  Email: subscriberParameters.Email,
};

export const subscriberDomainSchemas = { ...subscriberSchemas, ...fieldSchemas, ...tagSchemas, ...topicSchemas };
