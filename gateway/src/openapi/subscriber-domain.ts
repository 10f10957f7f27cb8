import { CREATE_STATUSES, FieldTypes, FieldUsageCategories, MANUAL_STATUSES, SubscriberStatuses, SyncModes, SyncOutcomes } from '../mapping/enums';
import { ERROR_IDS_KEYWORD, PER_ITEM_KEYWORD } from './keywords';
import { errorResponse, instant, json, ok, rateLimitHeaders, ref, schemaRef, uuid, type Json } from './common';

/**
 * The subscriber domain of the OpenAPI document: subscribers, replaceable data, topics and field
 * values of one subscriber, bulk tagging, sync, the field catalogue, tags and topics (API.md
 * section 3, served by the subscriber service). Limits in the schemas are the service's too, so
 * most bad input is answered by the gateway with the same errorId the service would give.
 */

// ---- limits (the subscriber service enforces the same) -----------------------------------------
const MAX = {
  email: 254,
  firstName: 255,
  label: 255,
  longText: 100_000,
  tagName: 100,
  topicLabel: 255,
  description: 2_000,
  options: 500,
  tagIds: 1_000,
  topicIds: 1_000,
  fieldValues: 1_000,
  bulkSubscribers: 10_000,
  syncRows: 1_000,
  optOutSource: 100,
  search: 254,
} as const;

const STATUSES = SubscriberStatuses.names;

// ---- responses ----------------------------------------------------------------------------------

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

interface ErrorIds {
  400?: string[];
  404?: string[];
  409?: string[];
}

/**
 * The responses of one operation: its success response, and error responses listing every errorId
 * it can answer (the generic ones of its kind plus the operation's own).
 */
export function responses(method: Method, success: Record<string, unknown>, errs: ErrorIds, opts: { body?: boolean; maxBody?: string } = {}) {
  const hasBody = opts.body ?? (method === 'post' || method === 'put' || method === 'patch');
  const bad = [
    'validation_failed',
    'unknown_property',
    ...(hasBody ? ['malformed_json'] : []),
    ...(method === 'post' ? ['invalid_idempotency_key'] : []),
    'api_key_in_url',
    ...(errs[400] ?? []),
  ];
  const conflicts = [...(errs[409] ?? []), ...(method === 'post' ? ['idempotency_in_progress'] : [])];
  return {
    ...success,
    '400': errorResponse('The request does not satisfy the operation contract; `details` lists each problem.', unique(bad), rateLimitHeaders),
    '401': ref('responses', 'Unauthorized'),
    ...(errs[404]?.length
      ? { '404': errorResponse('The resource, or a resource the request refers to, does not exist in the account (ids of other accounts included).', errs[404], rateLimitHeaders) }
      : {}),
    ...(conflicts.length
      ? {
          '409': errorResponse(
            'Conflict with the current state' + (method === 'post' ? ', or the same Idempotency-Key is still in flight (then with Retry-After: 1)' : '') + '.',
            conflicts,
            method === 'post' ? { ...rateLimitHeaders, 'Retry-After': ref('headers', 'RetryAfter') } : rateLimitHeaders,
          ),
        }
      : {}),
    ...(hasBody
      ? {
          '413': errorResponse(`The body is over ${opts.maxBody ?? '1 MiB'}.`, ['payload_too_large'], rateLimitHeaders),
          '415': ref('responses', 'UnsupportedMediaType'),
        }
      : {}),
    ...(method === 'post' ? { '422': ref('responses', 'IdempotencyKeyReused') } : {}),
    '429': ref('responses', 'TooManyRequests'),
    '500': ref('responses', 'InternalError'),
    '503': ref('responses', 'ServiceUnavailable'),
  };
}

const unique = (xs: string[]) => [...new Set(xs)];

/** Listing by segment (GET /subscribers?segmentId=, GET /segments/{segmentId}/subscribers): shared text. */
export const SEGMENT_MEMBERS = `Members of a segment (\`segmentId\`): the subscribers for which the saved segment's expression is TRUE at the time of the request; a subscriber for which it is UNKNOWN (say, a comparison on a field without a value) or FALSE is not a member. \`segmentId\` combines with the other filters (AND): \`status\`, \`tagId\`, \`topicId\` and \`search\` narrow the members exactly as they narrow the whole list, the order is the same (registration time, then id), \`totalItems\` counts the members matching every filter and \`statusCounts\` the members matching every filter except \`status\`. The segment service owns the contact projection and evaluates the expression; the page's subscribers are then read from the subscriber service, so a subscriber deleted between the two reads is left out of that page. The answer reflects every write acknowledged before the request was received (read-after-write): while the segment service has not caught up it answers \`503 segment_projection_lagging\` rather than a stale page. A segment of another account is unknown here (\`404 segment_not_found\`). When the segment service cannot be reached the answer is \`503 segment_service_unavailable\`.`;

export const SEGMENT_MEMBERS_503 = errorResponse(
  'A backing service is unavailable: `segment_service_unavailable` (the segment service, which evaluates the segment, did not answer), `segment_projection_lagging` (it has not yet applied every acknowledged subscriber change; retry shortly), or another backing service or the message store (`service_unavailable`). Retry later with backoff.',
  ['service_unavailable', 'segment_service_unavailable', 'segment_projection_lagging'],
  rateLimitHeaders,
);
const idempotencyKey = ref('parameters', 'IdempotencyKey');
const created = (description: string, schema: string) =>
  ok(description, schemaRef(schema), { Location: ref('headers', 'Location'), 'Idempotency-Replay': ref('headers', 'IdempotencyReplay') });
const posted = (description: string, schema: string) => ok(description, schemaRef(schema), { 'Idempotency-Replay': ref('headers', 'IdempotencyReplay') });
const noContent = (description: string) => ok(description, undefined);
const body = (schema: string, required = true) => ({ required, content: json(schemaRef(schema)) });

// errorIds shared by several operations
const VALUE_400 = ['invalid_uuid', 'invalid_email', 'duplicate_ids', 'field_value_kind_mismatch', 'option_inactive'];
const VALUE_404 = ['field_not_found', 'option_not_found'];

const subscriberPath = [ref('parameters', 'SubscriberId')];

// ---- paths --------------------------------------------------------------------------------------

export const subscriberDomainTags = [
  { name: 'Subscribers', description: 'Subscribers, their replaceable data, topics and field values; bulk tagging and sync.' },
  { name: 'Fields', description: 'The field catalogue: built-in and custom subscriber fields, their usage.' },
  { name: 'Tags', description: 'Tags: account-wide labels put on subscribers (one by one, in bulk or by sync).' },
  { name: 'Topics', description: 'Topics subscribers join; one of them is the account\'s default topic.' },
];

const SUBSCRIBER_WRITE_400 = [...VALUE_400, 'required_field_missing', 'topic_inactive'];

export const subscriberDomainPaths = {
  '/subscribers': {
    get: {
      tags: ['Subscribers'],
      operationId: 'listSubscribers',
      summary: 'List subscribers (paginated)',
      description:
        `Ordered by registration time, oldest first (then by id), so pages stay stable while subscribers are added. \`statusCounts\` counts every status over the same filters except \`status\`. \`search\` is a case-insensitive prefix of the email address or first name. A \`tagId\` or \`topicId\` that is not a tag / topic of the account answers \`404 tag_not_found\` / \`topic_not_found\`.

${SEGMENT_MEMBERS}`,
      parameters: [
        ref('parameters', 'PageNumber'),
        ref('parameters', 'PageSize'),
        { name: 'status', in: 'query', required: false, schema: schemaRef('SubscriberStatus') },
        { name: 'tagId', in: 'query', required: false, schema: uuid, description: 'Only subscribers with this tag.' },
        { name: 'topicId', in: 'query', required: false, schema: uuid, description: 'Only subscribers subscribed to this topic.' },
        { name: 'search', in: 'query', required: false, schema: { type: 'string', minLength: 1, maxLength: MAX.search } },
        { name: 'segmentId', in: 'query', required: false, schema: uuid, description: 'Only members of this saved segment (subscribers for which its expression is TRUE); see the description.' },
      ],
      responses: {
        ...responses('get', { '200': ok('One page of subscribers.', schemaRef('PaginatedSubscribersDto')) }, { 400: ['invalid_uuid'], 404: ['tag_not_found', 'topic_not_found', 'segment_not_found'] }),
        '503': SEGMENT_MEMBERS_503,
      },
    },
    post: {
      tags: ['Subscribers'],
      operationId: 'addSubscriber',
      summary: 'Create a subscriber',
      description: `The email address is canonicalised (trimmed, lowercased) and unique per account (another account may hold the same address). \`subscriberStatus\` defaults to \`ACTIVE\`; on create it may be \`ACTIVE\`, \`UNSUBSCRIBED\`, \`BLOCKED\` or \`UNCONFIRMED\`.
- \`fields\`: values of custom fields, each field at most once; the kind must match the field type, option ids must be active options of that field, archived fields take no values. Every \`required\` custom field needs a value (\`400 required_field_missing\`, naming them in \`details\`).
- \`tags\`: ids of the account's tags.
- \`topicIds\`: active topics the subscriber joins. When the member is missing, the account's default topic is joined (every account has one, \`Newsletter\` unless the flag was moved); \`[]\` joins no topic.
- Ids of another account are unknown here (\`404\`, like any unknown id).`,
      parameters: [idempotencyKey],
      requestBody: body('AddSubscriber'),
      responses: responses(
        'post',
        { '201': created('Created.', 'Subscriber') },
        { 400: SUBSCRIBER_WRITE_400, 404: [...VALUE_404, 'tag_not_found', 'topic_not_found'], 409: ['subscriber_email_exists', 'field_archived'] },
      ),
    },
  },
  '/subscribers/sync': {
    post: {
      tags: ['Subscribers'],
      operationId: 'syncSubscribers',
      summary: 'Create or update up to 1,000 subscribers',
      description: `Each row is an AddSubscriber matched by its canonical email address; \`results\` has one entry per row, in row order (\`index\` is the row's position). One bad row never spoils the others: a row that fails is \`FAILED\` with the \`errorId\` and \`message\` it would have got alone (for example \`invalid_email\`, \`tag_not_found\`, \`field_value_kind_mismatch\`, \`unknown_property\`), and every other row is applied. A request-level problem (no rows, more than 1,000 rows: \`400 sync_too_many_rows\`, a bad \`mode\`) fails the request as a whole and writes nothing.
- \`mode\`: \`UPSERT\` (default) creates unknown addresses and updates known ones; \`CREATE_ONLY\` fails known addresses (\`subscriber_email_exists\`, with their \`subscriberId\`); \`UPDATE_ONLY\` fails unknown ones (\`subscriber_not_found\`).
- A new subscriber is created exactly as by \`POST /subscribers\` (default status \`ACTIVE\`, default topic when \`topicIds\` is missing, required fields enforced).
- An existing subscriber is updated with the members the row carries: \`firstName\` if given (\`null\` clears it), \`subscriberStatus\` if given (manually settable statuses only: \`subscriber_status_not_manual\`), each given field value replaces that field's value (other values stay), given tags are added (none removed), given topics are joined (none left; personal opt-outs are respected). The email address is not changed (it is how the row matched). \`UNCHANGED\` when nothing differs, so repeating a sync is a no-op.
- A row whose email an earlier row of the same request already used is \`FAILED\` with \`duplicate_email_in_request\`.
- \`email\` in a result is the canonical address, or the row's value as sent when it is not a valid address (\`""\` when the row had none). \`subscriberId\` is null when no subscriber is involved.
- Bodies may be up to 10 MiB.`,
      parameters: [idempotencyKey],
      requestBody: { ...body('SyncSubscribersRequest'), [PER_ITEM_KEYWORD]: 'subscribers' },
      responses: responses('post', { '200': posted('One result per row.', 'SyncSubscribersResponse') }, { 400: ['sync_too_many_rows'] }, { maxBody: '10 MiB' }),
    },
  },
  '/subscribers/by-email/{email}': {
    get: {
      tags: ['Subscribers'],
      operationId: 'getSubscriberByEmail',
      summary: 'Read one subscriber by email address',
      description:
        'The address is percent-decoded from the path (encode `/`, `?`, `#`, `%` and spaces), then canonicalised (trimmed, lowercased) like on create, so any case finds the subscriber. An address that is not valid answers `400 invalid_email`.',
      parameters: [ref('parameters', 'Email')],
      responses: responses('get', { '200': ok('The subscriber.', schemaRef('Subscriber')) }, { 400: ['invalid_email'], 404: ['subscriber_not_found'] }),
    },
  },
  '/subscribers/tags/add': {
    post: {
      tags: ['Subscribers', 'Tags'],
      operationId: 'addTagsToSubscribers',
      summary: 'Add tags to selected subscribers',
      description:
        'Every listed tag is added to every selected subscriber, except subscribers that do not exist in the account (counted under `NOT_FOUND` in `skippedByStatus`) and `BLOCKED` ones (under `BLOCKED`). `taggedSubscriberCount` counts subscribers that got at least one new tag, `alreadyTaggedSubscriberCount` those that had all of them; selected = tagged + alreadyTagged + skipped. Every tag id must be a tag of the account (`404 tag_not_found` otherwise, and nothing is changed). Ids may not repeat (`400 duplicate_ids`). Repeating the request changes nothing more.',
      parameters: [idempotencyKey],
      requestBody: body('SelectedSubscriberTaggingRequest'),
      responses: responses('post', { '200': posted('Counts of the operation.', 'SelectedSubscriberTaggingAddResult') }, { 400: ['invalid_uuid', 'duplicate_ids'], 404: ['tag_not_found'] }),
    },
  },
  '/subscribers/tags/remove': {
    post: {
      tags: ['Subscribers', 'Tags'],
      operationId: 'removeTagsFromSubscribers',
      summary: 'Remove tags from selected subscribers',
      description:
        'Every listed tag is removed from every selected subscriber, with the skip rules of tag addition (`NOT_FOUND`, `BLOCKED`). `updatedSubscriberCount` counts subscribers that lost at least one tag, `withoutSelectedTagsSubscriberCount` those that had none of them.',
      parameters: [idempotencyKey],
      requestBody: body('SelectedSubscriberTaggingRequest'),
      responses: responses('post', { '200': posted('Counts of the operation.', 'SelectedSubscriberTaggingRemovalResult') }, { 400: ['invalid_uuid', 'duplicate_ids'], 404: ['tag_not_found'] }),
    },
  },
  '/subscribers/{subscriberId}': {
    get: {
      tags: ['Subscribers'],
      operationId: 'getSubscriber',
      summary: 'Read one subscriber',
      parameters: subscriberPath,
      responses: responses('get', { '200': ok('The subscriber.', schemaRef('Subscriber')) }, { 400: ['invalid_uuid'], 404: ['subscriber_not_found'] }),
    },
    delete: {
      tags: ['Subscribers'],
      operationId: 'deleteSubscriber',
      summary: 'Delete a subscriber',
      description: 'Deletes the subscriber with its field values, tags, topic subscriptions and opt-outs. A second delete answers `404`.',
      parameters: subscriberPath,
      responses: responses('delete', { '204': noContent('Deleted.') }, { 400: ['invalid_uuid'], 404: ['subscriber_not_found'] }),
    },
  },
  '/subscribers/{subscriberId}/data': {
    get: {
      tags: ['Subscribers'],
      operationId: 'getSubscriberData',
      summary: 'Read the replaceable data of a subscriber',
      description: 'SubscriberData: the canonical representation that `PUT` replaces; `fields` sorted by `fieldId`, `tags` sorted by id. It can be sent back to `PUT` unchanged (values of archived fields and deactivated options that are already stored are accepted again).',
      parameters: subscriberPath,
      responses: responses('get', { '200': ok('The data.', schemaRef('SubscriberData')) }, { 400: ['invalid_uuid'], 404: ['subscriber_not_found'] }),
    },
    put: {
      tags: ['Subscribers'],
      operationId: 'replaceSubscriberData',
      summary: 'Replace all replaceable data of a subscriber',
      description:
        'Atomic full replacement: `fields` and `tags` become the complete sets (values and tags left out are removed), `firstName: null` clears the first name, `subscriberStatus` must be manually settable (`ACTIVE`, `UNSUBSCRIBED`, `BLOCKED`; others answer `400 subscriber_status_not_manual`). Every `required` custom field needs a value. Either every part applies or none does: a request that fails anywhere changes nothing. Topics are replaced through `PUT /subscribers/{subscriberId}/topics`.',
      parameters: subscriberPath,
      requestBody: body('ReplaceSubscriberData'),
      responses: responses(
        'put',
        { '200': ok('The data after the replacement.', schemaRef('SubscriberData')) },
        { 400: [...VALUE_400, 'subscriber_status_not_manual', 'required_field_missing'], 404: ['subscriber_not_found', ...VALUE_404, 'tag_not_found'], 409: ['subscriber_email_exists', 'field_archived'] },
      ),
    },
  },
  '/subscribers/{subscriberId}/email': {
    put: {
      tags: ['Subscribers'],
      operationId: 'replaceSubscriberEmail',
      summary: 'Replace the email address',
      description: 'Canonicalised like on create; the address must not belong to another subscriber of the account.',
      parameters: subscriberPath,
      requestBody: body('ReplaceSubscriberEmail'),
      responses: responses('put', { '200': ok('The data after the replacement.', schemaRef('SubscriberData')) }, { 400: ['invalid_uuid', 'invalid_email'], 404: ['subscriber_not_found'], 409: ['subscriber_email_exists'] }),
    },
  },
  '/subscribers/{subscriberId}/first-name': {
    put: {
      tags: ['Subscribers'],
      operationId: 'replaceSubscriberFirstName',
      summary: 'Replace the first name',
      description: 'Trimmed; `null` (or a blank text) clears it.',
      parameters: subscriberPath,
      requestBody: body('ReplaceSubscriberFirstName'),
      responses: responses('put', { '200': ok('The data after the replacement.', schemaRef('SubscriberData')) }, { 400: ['invalid_uuid'], 404: ['subscriber_not_found'] }),
    },
  },
  '/subscribers/{subscriberId}/status': {
    put: {
      tags: ['Subscribers'],
      operationId: 'replaceSubscriberStatus',
      summary: 'Set the status by hand',
      description: 'Only `ACTIVE`, `UNSUBSCRIBED` and `BLOCKED` can be set by hand; any other status answers `400 subscriber_status_not_manual`.',
      parameters: subscriberPath,
      requestBody: body('ReplaceSubscriberStatus'),
      responses: responses('put', { '200': ok('The data after the replacement.', schemaRef('SubscriberData')) }, { 400: ['invalid_uuid', 'subscriber_status_not_manual'], 404: ['subscriber_not_found'] }),
    },
  },
  '/subscribers/{subscriberId}/topics': {
    get: {
      tags: ['Subscribers', 'Topics'],
      operationId: 'getSubscriberTopics',
      summary: 'Topics of a subscriber',
      description: 'Every topic of the account (in creation order) with this subscriber\'s subscription and personal opt-out (`optedOutAt` is null unless opted out).',
      parameters: subscriberPath,
      responses: responses('get', { '200': ok('The topics.', schemaRef('SubscriberTopics')) }, { 400: ['invalid_uuid'], 404: ['subscriber_not_found'] }),
    },
    put: {
      tags: ['Subscribers', 'Topics'],
      operationId: 'replaceSubscriberTopics',
      summary: 'Replace the topic subscriptions',
      description:
        'Full, atomic replacement: the listed topics (which must be active: `400 topic_inactive`) become the subscriptions and topics left out are unsubscribed (no opt-out is recorded for them). A listed topic the subscriber personally opted out of stays opted out and unsubscribed, unless `overrideOptOuts: true`: then the opt-out is removed and the topic subscribed.',
      parameters: subscriberPath,
      requestBody: body('ReplaceSubscriberTopics'),
      responses: responses(
        'put',
        { '200': ok('The topics after the replacement.', schemaRef('SubscriberTopics')) },
        { 400: ['invalid_uuid', 'duplicate_ids', 'topic_inactive'], 404: ['subscriber_not_found', 'topic_not_found'] },
      ),
    },
  },
  '/subscribers/{subscriberId}/topics/{topicId}/opt-out': {
    post: {
      tags: ['Subscribers', 'Topics'],
      operationId: 'optOutOfTopic',
      summary: 'Record an explicit opt-out from a topic',
      description:
        'Records an opt-out the reader expressed elsewhere (for example the integrator\'s own preference centre): the subscriber is unsubscribed from the topic and the opt-out is kept with its time and `source` (default `api`). Repeating it keeps the first record. It is lifted only by a topic replacement with `overrideOptOuts: true`. The body is optional.',
      parameters: [...subscriberPath, ref('parameters', 'TopicId'), idempotencyKey],
      requestBody: body('TopicOptOutRequest', false),
      responses: responses('post', { '200': posted('The topics after the opt-out (`optedOut: true`, `subscribed: false`).', 'SubscriberTopics') }, { 400: ['invalid_uuid'], 404: ['subscriber_not_found', 'topic_not_found'] }),
    },
  },
  '/subscribers/{subscriberId}/field-values': {
    get: {
      tags: ['Subscribers', 'Fields'],
      operationId: 'listFieldValues',
      summary: 'Typed field values of a subscriber',
      description: 'Values of custom fields (archived ones included), sorted by `fieldId`; option kinds carry the options\' labels. Built-in fields are read from the subscriber (`email`, `firstName`).',
      parameters: subscriberPath,
      responses: responses('get', { '200': ok('The values.', schemaRef('SubscriberFieldValues')) }, { 400: ['invalid_uuid'], 404: ['subscriber_not_found'] }),
    },
  },
  '/subscribers/{subscriberId}/field-values/{fieldId}': {
    put: {
      tags: ['Subscribers', 'Fields'],
      operationId: 'setFieldValue',
      summary: 'Set one field value',
      description:
        'Replaces the value of one custom field. The kind must match the field type (`TEXT` for TEXT and LONG_TEXT fields: at most 10,000 and 100,000 characters; `EMAIL` values are validated and canonicalised; `SINGLE_OPTION` / `MULTI_OPTION` for choice fields, with active options of that field); archived fields take no new values (`409 field_archived`).',
      parameters: [...subscriberPath, ref('parameters', 'FieldId')],
      requestBody: body('FieldValueRequest'),
      responses: responses(
        'put',
        { '200': ok('The value as stored.', schemaRef('FieldValueEntry')) },
        { 400: VALUE_400, 404: ['subscriber_not_found', ...VALUE_404], 409: ['field_archived'] },
      ),
    },
    delete: {
      tags: ['Subscribers', 'Fields'],
      operationId: 'deleteFieldValue',
      summary: 'Remove one field value',
      description: 'Idempotent: removing a value the subscriber does not have also answers `204`. (Required fields are enforced on create and full replacement, not here.)',
      parameters: [...subscriberPath, ref('parameters', 'FieldId')],
      responses: responses('delete', { '204': noContent('Removed.') }, { 400: ['invalid_uuid'], 404: ['subscriber_not_found', 'field_not_found'] }),
    },
  },
  '/fields': {
    get: {
      tags: ['Fields'],
      operationId: 'listFields',
      summary: 'The field catalogue',
      description: 'Built-in fields (`EMAIL`, `FIRST_NAME`, positions 0 and 1) first, then custom fields by `position`. Archived fields only with `includeArchived=true`.',
      parameters: [{ name: 'includeArchived', in: 'query', required: false, schema: { type: 'boolean', default: false } }],
      responses: responses('get', { '200': ok('The catalogue.', schemaRef('FieldCatalog')) }, {}),
    },
    post: {
      tags: ['Fields'],
      operationId: 'addField',
      summary: 'Create a custom field',
      description: `- \`personalizationTagName\`: lowercase ASCII (\`^[a-z][a-z0-9_]{0,63}$\`, else \`400 invalid_personalization_tag_name\`), unique in the account (\`409 personalization_tag_name_exists\`; \`email\` and \`first_name\` are taken by the built-ins), never changed afterwards. When missing or empty, one is derived from the label (accents stripped, lowercase, other characters as \`_\`, \`_2\`, \`_3\`, ... appended until it is free).
- \`options\`: option labels, required for \`SINGLE_CHOICE\` / \`MULTI_CHOICE\` (\`400 field_options_required\`), refused for other types (\`400 field_options_not_allowed\`); each label 1-255 characters, not twice.
- \`EMAIL\` creates an additional validated email-address field; the subscriber's own address stays the built-in \`EMAIL\` field.
- The new field is placed last (\`position\`).`,
      parameters: [idempotencyKey],
      requestBody: body('AddField'),
      responses: responses(
        'post',
        { '201': created('Created.', 'Field') },
        { 400: ['field_options_required', 'field_options_not_allowed', 'invalid_personalization_tag_name'], 409: ['personalization_tag_name_exists'] },
      ),
    },
  },
  '/fields/{fieldId}': {
    get: {
      tags: ['Fields'],
      operationId: 'getField',
      summary: 'Read one field',
      description: 'A custom field by id (archived ones too, `active: false`), or a built-in field by name (`EMAIL`, `FIRST_NAME`).',
      parameters: [ref('parameters', 'FieldIdOrBuiltIn')],
      responses: responses('get', { '200': ok('The field.', schemaRef('Field')) }, { 400: ['invalid_uuid'], 404: ['field_not_found'] }),
    },
    patch: {
      tags: ['Fields'],
      operationId: 'updateField',
      summary: 'Change a custom field',
      description: `Only the members sent change. \`fieldType\` and \`personalizationTagName\` never change.
- \`position\`: moves the field among the custom fields (2 .. 1 + number of custom fields; the others shift).
- \`options\` (choice fields only; \`400 field_options_not_allowed\` otherwise): the complete option list. An option with \`id: null\` (or no \`id\`) is added; one with an id is kept, relabelled, reordered, and (de)activated by \`active\` (default \`true\`); options left out are deactivated, never deleted, so stored values keep their labels. \`position\` of an option defaults to its place in the list. At least one option must stay active (\`400 field_options_required\`); ids must be options of this field (\`404 option_not_found\`).`,
      parameters: [ref('parameters', 'FieldIdOrBuiltIn')],
      requestBody: body('UpdateField'),
      responses: responses(
        'patch',
        { '200': ok('The field after the change.', schemaRef('Field')) },
        { 400: ['invalid_uuid', 'duplicate_ids', 'field_options_required', 'field_options_not_allowed'], 404: ['field_not_found', 'option_not_found'], 409: ['built_in_field_immutable'] },
      ),
    },
    delete: {
      tags: ['Fields'],
      operationId: 'deleteField',
      summary: 'Delete an archived field permanently',
      description:
        'Only archived fields (`409 field_not_archived` otherwise). Refused with `409 field_delete_blocked` while the usage report says `permanentDeleteBlocked` (the blocking usages are listed in `details`), and with `409 field_usage_unknown` when a service that may use the field did not answer (nothing can be proven; retry later). Deletes the field\'s values of every subscriber.',
      parameters: [ref('parameters', 'FieldIdOrBuiltIn')],
      responses: responses('delete', { '204': noContent('Deleted.') }, { 400: ['invalid_uuid'], 404: ['field_not_found'], 409: ['field_not_archived', 'field_delete_blocked', 'field_usage_unknown', 'built_in_field_immutable'] }),
    },
  },
  '/fields/{fieldId}/archive': {
    post: {
      tags: ['Fields'],
      operationId: 'archiveField',
      summary: 'Archive a custom field',
      description:
        'The field becomes inactive: it leaves the catalogue (unless `includeArchived`) and takes no new values; stored values are kept. Refused with `409 field_archive_blocked` while write usages block it (forms, automations, imports, ... that write the field): `details` lists each blocking usage as `{path: "blockingUsages[i]", problem}`. Refused with `409 field_usage_unknown` when a service that may use the field did not answer. Archiving an archived field answers it unchanged.',
      parameters: [ref('parameters', 'FieldIdOrBuiltIn'), idempotencyKey],
      responses: responses(
        'post',
        { '200': posted('The archived field (`active: false`).', 'Field') },
        { 400: ['invalid_uuid'], 404: ['field_not_found'], 409: ['field_archive_blocked', 'field_usage_unknown', 'built_in_field_immutable'] },
        { body: false },
      ),
    },
  },
  '/fields/{fieldId}/restore': {
    post: {
      tags: ['Fields'],
      operationId: 'restoreField',
      summary: 'Restore an archived field',
      description: 'The field becomes active again, placed last. Restoring an active field answers it unchanged.',
      parameters: [ref('parameters', 'FieldIdOrBuiltIn'), idempotencyKey],
      responses: responses('post', { '200': posted('The restored field.', 'Field') }, { 400: ['invalid_uuid'], 404: ['field_not_found'], 409: ['built_in_field_immutable'] }, { body: false }),
    },
  },
  '/fields/{fieldId}/usage': {
    get: {
      tags: ['Fields'],
      operationId: 'getFieldUsage',
      summary: 'Where a field is used',
      description:
        'Each service that can use a field (segments, forms, automations, imports, sends) is asked for its usages over gRPC; `sources` says which were asked and whether they answered (with `error` when not). While a source has not answered, `archiveBlocked` and `permanentDeleteBlocked` are true (an unanswered source can hide a blocking usage), and archive / delete answer `409 field_usage_unknown`. `subscriberValueCount` counts subscribers holding a value (a multi-option value counts once). Segments (`category: SEGMENT`): a saved segment with a condition on the field (in any condition group) reads it and never writes it, so it is listed in `warningUsages` (archival goes ahead: saved conditions on an archived field keep evaluating, only new conditions may not name it) and, with `permanentDeleteBlocking: true`, in `permanentDeleteBlockingUsages` (deleting the field would erase its values and turn the condition UNKNOWN for everybody, silently changing the segment): change or delete the segment first. A segment that only references such a segment (`CONTAINED_IN` / `NOT_CONTAINED_IN`, at any depth) is listed in `warningUsages` without blocking (its `reason` names the segment it goes through), since the segment it references already blocks. `area` names the conditions (`conditionGroups[g].conditions[c]`), `link` the segment (`/segments/{id}`).',
      parameters: [ref('parameters', 'FieldId')],
      responses: responses('get', { '200': ok('The report.', schemaRef('FieldUsageReport')) }, { 400: ['invalid_uuid'], 404: ['field_not_found'] }),
    },
  },
  '/fields/{fieldId}/forms': {
    get: {
      tags: ['Fields'],
      operationId: 'listFieldForms',
      summary: 'Signup forms that use a field',
      description: 'Each form once, as the form service reports its usages of the field. When the form service does not answer, `409 field_usage_unknown` (retry later): an empty list always means "no form".',
      parameters: [ref('parameters', 'FieldId')],
      responses: responses('get', { '200': ok('The forms.', { type: 'array', items: schemaRef('FieldFormUseDto') }) }, { 400: ['invalid_uuid'], 404: ['field_not_found'], 409: ['field_usage_unknown'] }),
    },
  },
  '/tags': {
    get: {
      tags: ['Tags'],
      operationId: 'listTags',
      summary: 'Tags of the account',
      description: 'Ordered by name.',
      responses: responses('get', { '200': ok('The tags.', schemaRef('TagList')) }, {}),
    },
    post: {
      tags: ['Tags'],
      operationId: 'addTag',
      summary: 'Create a tag',
      description: 'The name is trimmed (1-100 characters) and unique in the account ignoring case (`409 tag_name_exists`).',
      parameters: [idempotencyKey],
      requestBody: body('AddTag'),
      responses: responses('post', { '201': created('Created.', 'Tag') }, { 409: ['tag_name_exists'] }),
    },
  },
  '/tags/{tagId}': {
    get: {
      tags: ['Tags'],
      operationId: 'getTag',
      summary: 'Read one tag',
      parameters: [ref('parameters', 'TagId')],
      responses: responses('get', { '200': ok('The tag.', schemaRef('Tag')) }, { 400: ['invalid_uuid'], 404: ['tag_not_found'] }),
    },
    put: {
      tags: ['Tags'],
      operationId: 'renameTag',
      summary: 'Rename a tag',
      description: 'The id and the subscribers\' assignments stay.',
      parameters: [ref('parameters', 'TagId')],
      requestBody: body('RenameTag'),
      responses: responses('put', { '200': ok('The renamed tag.', schemaRef('Tag')) }, { 400: ['invalid_uuid'], 404: ['tag_not_found'], 409: ['tag_name_exists'] }),
    },
    delete: {
      tags: ['Tags'],
      operationId: 'deleteTag',
      summary: 'Delete a tag',
      description: 'The tag is removed from every subscriber.',
      parameters: [ref('parameters', 'TagId')],
      responses: responses('delete', { '204': noContent('Deleted.') }, { 400: ['invalid_uuid'], 404: ['tag_not_found'] }),
    },
  },
  '/topics': {
    get: {
      tags: ['Topics'],
      operationId: 'listTopics',
      summary: 'Topics of the account',
      description: 'In creation order. Every account has exactly one default topic at all times: from the account\'s first use on there is a topic labelled `Newsletter` (active, `isDefault: true`, no subscribers) unless the flag was moved to another topic.',
      responses: responses('get', { '200': ok('The topics.', schemaRef('TopicList')) }, {}),
    },
    post: {
      tags: ['Topics'],
      operationId: 'addTopic',
      summary: 'Create a topic',
      description:
        'A new topic is not the default unless the request says `isDefault: true`: then it becomes the account\'s default topic (the one subscribers join when created without `topicIds`) and the previous default stops being it. `enrollExistingSubscribers: true` subscribes every existing subscriber to the new topic.',
      parameters: [idempotencyKey],
      requestBody: body('AddTopic'),
      responses: responses('post', { '201': created('Created.', 'Topic') }, {}),
    },
  },
  '/topics/{topicId}': {
    get: {
      tags: ['Topics'],
      operationId: 'getTopic',
      summary: 'Read one topic',
      parameters: [ref('parameters', 'TopicId')],
      responses: responses('get', { '200': ok('The topic.', schemaRef('Topic')) }, { 400: ['invalid_uuid'], 404: ['topic_not_found'] }),
    },
    patch: {
      tags: ['Topics'],
      operationId: 'updateTopic',
      summary: 'Change a topic',
      description:
        'Only the members sent change; `description: null` clears it. `isDefault: true` makes this topic the default (the previous default stops being it). The default topic cannot be un-defaulted or deactivated (`409 topic_is_default`: make another topic the default first), and an inactive topic cannot become the default (`400 topic_inactive`). Deactivating a topic keeps its subscribers; nobody can join it until it is active again.',
      parameters: [ref('parameters', 'TopicId')],
      requestBody: body('UpdateTopic'),
      responses: responses('patch', { '200': ok('The topic after the change.', schemaRef('Topic')) }, { 400: ['invalid_uuid', 'topic_inactive'], 404: ['topic_not_found'], 409: ['topic_is_default'] }),
    },
    delete: {
      tags: ['Topics'],
      operationId: 'deleteTopic',
      summary: 'Delete a topic',
      description: 'Subscriptions and opt-outs of the topic go with it. The default topic cannot be deleted (`409 topic_is_default`: make another topic the default first).',
      parameters: [ref('parameters', 'TopicId')],
      responses: responses('delete', { '204': noContent('Deleted.') }, { 400: ['invalid_uuid'], 404: ['topic_not_found'], 409: ['topic_is_default'] }),
    },
  },
};

// ---- parameters ---------------------------------------------------------------------------------

export const subscriberDomainParameters = {
  SubscriberId: { name: 'subscriberId', in: 'path', required: true, schema: uuid },
  FieldId: { name: 'fieldId', in: 'path', required: true, schema: uuid, description: 'A custom field\'s id (built-in fields have none).' },
  FieldIdOrBuiltIn: {
    name: 'fieldId',
    in: 'path',
    required: true,
    schema: { anyOf: [uuid, { type: 'string', enum: ['EMAIL', 'FIRST_NAME'] }] },
    description: 'A custom field\'s id, or `EMAIL` / `FIRST_NAME` for a built-in field (read-only: changing, archiving, restoring or deleting one answers `409 built_in_field_immutable`).',
  },
  TagId: { name: 'tagId', in: 'path', required: true, schema: uuid },
  TopicId: { name: 'topicId', in: 'path', required: true, schema: uuid },
  Email: {
    name: 'email',
    in: 'path',
    required: true,
    schema: { type: 'string', minLength: 1, maxLength: MAX.email, [ERROR_IDS_KEYWORD]: { minLength: 'invalid_email', maxLength: 'invalid_email' } },
    description: 'Percent-encoded email address.',
    examples: { plain: { value: 'ann%40example.org' } },
  },
};

// ---- schemas ------------------------------------------------------------------------------------

const object = (required: string[], properties: Json, extra: Json = {}) => ({ type: 'object', required, properties, additionalProperties: false, ...extra });
const ids = (maxItems: number, description?: string) => ({ type: 'array', items: uuid, uniqueItems: true, maxItems, ...(description ? { description } : {}) });
const int64 = { type: 'integer', format: 'int64', minimum: 0 };
const int32 = { type: 'integer', format: 'int32' };
const nullable = (schema: Json) => ({ ...schema, type: [schema.type as string, 'null'] });

/** Email addresses: canonicalised by the service; too long or empty is an invalid address. */
const emailAddress = {
  type: 'string',
  minLength: 1,
  maxLength: MAX.email,
  [ERROR_IDS_KEYWORD]: { minLength: 'invalid_email', maxLength: 'invalid_email' },
  description: 'Trimmed and lowercased by the service; invalid syntax answers `400 invalid_email`.',
};
const firstName = { type: ['string', 'null'], maxLength: MAX.firstName, description: 'Trimmed; null (or blank) means none.' };

/** The field value variants of one direction (request or response), discriminated by `kind`. */
function fieldValueSchemas(direction: 'Request' | 'Response') {
  const withLabels = direction === 'Response';
  const labels = { type: 'array', items: { type: 'string' }, description: 'Labels of the selected options, in the order of the ids.' };
  const variant = (kind: string, required: string[], properties: Json, description: string) => [
    `${kind}FieldValue${direction}`,
    object(['kind', ...required], { kind: { const: toKind(kind) }, ...properties }, { description }),
  ];
  return Object.fromEntries([
    variant('Text', ['text'], { text: { type: 'string', maxLength: MAX.longText } }, 'TEXT: value of a TEXT (at most 10,000 characters) or LONG_TEXT field (at most 100,000).'),
    variant('Email', ['text'], { text: emailAddress }, 'EMAIL: value of an EMAIL field, validated and canonicalised (trimmed, lowercase).'),
    variant('Number', ['number'], { number: { type: 'number' } }, 'NUMBER: a finite number.'),
    variant('Date', ['date'], { date: { type: 'string', format: 'date', examples: ['2024-02-29'] } }, 'DATE: a calendar date YYYY-MM-DD.'),
    variant('Boolean', ['booleanValue'], { booleanValue: { type: 'boolean' } }, 'BOOLEAN.'),
    variant(
      'SingleOption',
      withLabels ? ['optionId', 'labels'] : ['optionId'],
      { optionId: uuid, ...(withLabels ? { labels } : {}) },
      'SINGLE_OPTION: value of a SINGLE_CHOICE field; the option must be an active option of that field.',
    ),
    variant(
      'MultiOption',
      withLabels ? ['optionIds', 'labels'] : ['optionIds'],
      { optionIds: { ...ids(MAX.options), minItems: 1 }, ...(withLabels ? { labels } : {}) },
      'MULTI_OPTION: value of a MULTI_CHOICE field, 1-500 distinct active options of that field (delete the value to clear it).',
    ),
  ]);
}

function toKind(name: string) {
  return ({ Text: 'TEXT', Email: 'EMAIL', Number: 'NUMBER', Date: 'DATE', Boolean: 'BOOLEAN', SingleOption: 'SINGLE_OPTION', MultiOption: 'MULTI_OPTION' } as Record<string, string>)[name];
}

const FIELD_VALUE_VARIANTS = ['Text', 'Email', 'Number', 'Date', 'Boolean', 'SingleOption', 'MultiOption'];

function fieldValueUnion(direction: 'Request' | 'Response') {
  return {
    type: 'object',
    required: ['kind'],
    // `mapping` makes generated clients' kinds the real values (without it they are the schema names).
    discriminator: { propertyName: 'kind', mapping: Object.fromEntries(FIELD_VALUE_VARIANTS.map((k) => [toKind(k), `#/components/schemas/${k}FieldValue${direction}`])) },
    oneOf: FIELD_VALUE_VARIANTS.map((k) => schemaRef(`${k}FieldValue${direction}`)),
    description: `A field value (${direction.toLowerCase()} variant), discriminated by \`kind\`. The kind must match the field type: TEXT and LONG_TEXT -> TEXT, EMAIL -> EMAIL, NUMBER -> NUMBER, DATE -> DATE, BOOLEAN -> BOOLEAN, SINGLE_CHOICE -> SINGLE_OPTION, MULTI_CHOICE -> MULTI_OPTION (else \`400 field_value_kind_mismatch\`).`,
  };
}

const fieldValueInputs = {
  type: 'array',
  items: schemaRef('FieldValueInput'),
  maxItems: MAX.fieldValues,
  description: 'Values of custom fields, each field at most once (`400 duplicate_ids`).',
};

const taggingCounts = (names: string[]) => Object.fromEntries(names.map((n) => [n, { ...int32, minimum: 0 }]));

const fieldUsage = object(['category', 'area', 'artifactId', 'artifactName', 'status', 'reason', 'link', 'permanentDeleteBlocking'], {
  category: { type: 'string', enum: [...FieldUsageCategories.names] },
  area: { type: 'string', description: 'Where in the artifact (e.g. a form step, an automation action).' },
  artifactId: { type: 'string', description: 'Id of the form, automation, segment, ... (a UUID).' },
  artifactName: { type: 'string' },
  status: { type: 'string', description: 'Status of the artifact as its service names it.' },
  reason: { type: 'string' },
  link: { type: 'string', description: 'Where to see the artifact (may be empty).' },
  permanentDeleteBlocking: { type: 'boolean' },
});

export const subscriberDomainSchemas = {
  SubscriberStatus: {
    type: 'string',
    enum: [...STATUSES],
    description: `\`UNCONFIRMED\` (double opt-in pending), \`ACTIVE\` (confirmed, mailable), \`UNSUBSCRIBED\`, \`BOUNCED\`, \`COMPLAINED\`, \`BLOCKED\`. Manually settable: ${MANUAL_STATUSES.map((s) => `\`${s}\``).join(', ')}.`,
  },
  AddSubscriber: object(['email'], {
    email: emailAddress,
    firstName,
    subscriberStatus: { type: 'string', enum: [...CREATE_STATUSES], description: 'Default `ACTIVE` on create; a sync row without it leaves an existing subscriber\'s status as is.' },
    fields: fieldValueInputs,
    tags: ids(MAX.tagIds, 'Tag ids of the account, each at most once.'),
    topicIds: ids(MAX.topicIds, 'Active topics to join. Missing: the account\'s default topic; `[]`: none.'),
  }),
  SyncSubscribersRequest: object(['subscribers'], {
    subscribers: {
      type: 'array',
      items: schemaRef('AddSubscriber'),
      minItems: 1,
      maxItems: MAX.syncRows,
      [ERROR_IDS_KEYWORD]: { maxItems: 'sync_too_many_rows' },
      description: 'The rows (1-1,000; more answers `400 sync_too_many_rows`). Each row is validated on its own.',
    },
    mode: { type: 'string', enum: [...SyncModes.names], default: 'UPSERT' },
  }),
  SyncResult: object(['index', 'email', 'subscriberId', 'outcome'], {
    index: { ...int32, minimum: 0, description: 'Position of the row in the request.' },
    email: { type: 'string' },
    subscriberId: { ...nullable(uuid), description: 'The subscriber created, updated or matched; null when none.' },
    outcome: { type: 'string', enum: [...SyncOutcomes.names] },
    errorId: { type: 'string', description: 'Only when FAILED: the errorId the row would have got alone, or `duplicate_email_in_request`.' },
    message: { type: 'string', description: 'Only when FAILED.' },
  }),
  SyncSubscribersResponse: object(['results'], { results: { type: 'array', items: schemaRef('SyncResult') } }),
  FieldValueInput: object(['fieldId', 'value'], { fieldId: uuid, value: schemaRef('FieldValueRequest') }, { description: 'The value of one custom field.' }),
  FieldValueRequest: fieldValueUnion('Request'),
  FieldValueResponse: fieldValueUnion('Response'),
  ...fieldValueSchemas('Request'),
  ...fieldValueSchemas('Response'),
  FieldValueEntry: object(['fieldId', 'personalizationTagName', 'value'], { fieldId: uuid, personalizationTagName: { type: 'string' }, value: schemaRef('FieldValueResponse') }),
  SubscriberFieldValues: object(['values'], { values: { type: 'array', items: schemaRef('FieldValueEntry') } }),
  BuiltInFieldRef: object(['type', 'builtInField'], { type: { const: 'BUILT_IN' }, builtInField: { type: 'string', enum: [...['EMAIL', 'FIRST_NAME']] } }),
  CustomFieldRef: object(['type', 'fieldId'], { type: { const: 'CUSTOM' }, fieldId: uuid }),
  FieldRef: { oneOf: [schemaRef('BuiltInFieldRef'), schemaRef('CustomFieldRef')] },
  SubscriberFieldValue: object(['fieldRef', 'personalizationTagName', 'label', 'displayValue'], {
    fieldRef: schemaRef('FieldRef'),
    personalizationTagName: { type: 'string' },
    label: { type: 'string' },
    displayValue: { type: 'string', description: 'Text as stored, numbers and dates as written, `true`/`false`, option labels joined by ", ".' },
  }),
  Subscriber: object(['id', 'email', 'firstName', 'subscriberStatus', 'values', 'tags', 'registeredAt'], {
    id: uuid,
    email: { type: 'string', description: 'Canonical (lowercase).' },
    firstName: { type: ['string', 'null'] },
    subscriberStatus: schemaRef('SubscriberStatus'),
    values: { type: 'array', items: schemaRef('SubscriberFieldValue'), description: 'Display values (built-in fields first); typed values come from `/subscribers/{id}/field-values`.' },
    tags: { type: 'array', items: uuid },
    registeredAt: instant,
    lastImportedAtUtc: { ...instant, description: 'Latest successful import participation, when recorded (absent otherwise).' },
    gdprAgreement: { type: 'string', description: 'Text of the agreement, when applicable (absent otherwise).' },
  }),
  SubscriberOverview: object(['id', 'email', 'firstName', 'subscriberStatus', 'tags', 'registeredAt'], {
    id: uuid,
    email: { type: 'string' },
    firstName: { type: ['string', 'null'] },
    subscriberStatus: schemaRef('SubscriberStatus'),
    tags: { type: 'array', items: uuid },
    registeredAt: instant,
  }),
  SubscriberStatusCountsDto: object([...STATUSES], Object.fromEntries(STATUSES.map((s) => [s, int64]))),
  PaginatedSubscribersDto: object(['items', 'pageNumber', 'pageSize', 'totalItems', 'totalPages', 'statusCounts'], {
    items: { type: 'array', items: schemaRef('SubscriberOverview') },
    pageNumber: { ...int32, minimum: 1 },
    pageSize: { ...int32, minimum: 1 },
    totalItems: int64,
    totalPages: { ...int32, minimum: 0 },
    statusCounts: schemaRef('SubscriberStatusCountsDto'),
  }),
  SubscriberData: object(['subscriberId', 'email', 'firstName', 'subscriberStatus', 'fields', 'tags'], {
    subscriberId: uuid,
    email: { type: 'string', description: 'Canonical (lowercase).' },
    firstName: { type: ['string', 'null'], description: 'null means none.' },
    subscriberStatus: schemaRef('SubscriberStatus'),
    fields: { type: 'array', items: schemaRef('FieldValueInput'), description: 'The complete value set, sorted by fieldId (request variants, so it can be sent back).' },
    tags: { type: 'array', items: uuid, description: 'The complete tag set, sorted by id.' },
  }),
  ReplaceSubscriberData: object(['email', 'firstName', 'subscriberStatus', 'fields', 'tags'], {
    email: emailAddress,
    firstName: { ...firstName, description: 'null clears it.' },
    subscriberStatus: { ...schemaRef('SubscriberStatus'), description: 'Manually settable statuses only (`400 subscriber_status_not_manual`).' },
    fields: { ...fieldValueInputs, description: 'The complete value set: fields left out lose their value. Each field at most once.' },
    tags: ids(MAX.tagIds, 'The complete tag set.'),
  }),
  ReplaceSubscriberEmail: object(['email'], { email: emailAddress }),
  ReplaceSubscriberFirstName: object(['firstName'], { firstName: { ...firstName, description: 'Required; null clears it.' } }),
  ReplaceSubscriberStatus: object(['subscriberStatus'], { subscriberStatus: { ...schemaRef('SubscriberStatus'), description: 'Manually settable statuses only.' } }),
  ReplaceSubscriberTopics: object(['topicIds'], {
    topicIds: ids(MAX.topicIds, 'Active topics; topics left out are unsubscribed.'),
    overrideOptOuts: { type: 'boolean', default: false, description: 'When true, listed topics the subscriber opted out of personally are subscribed again.' },
  }),
  SubscriberTopic: object(['topicId', 'label', 'subscribed', 'optedOut', 'optedOutAt'], {
    topicId: uuid,
    label: { type: 'string' },
    subscribed: { type: 'boolean' },
    optedOut: { type: 'boolean', description: 'The reader opted out of this topic personally.' },
    optedOutAt: { ...nullable(instant), description: 'When the opt-out was recorded; null unless optedOut.' },
  }),
  SubscriberTopics: object(['topics'], { topics: { type: 'array', items: schemaRef('SubscriberTopic') } }),
  TopicOptOutRequest: object([], { source: { type: 'string', minLength: 1, maxLength: MAX.optOutSource, description: 'Where the reader opted out (default `api`).' } }),
  SelectedSubscriberTaggingRequest: object(['subscriberIds', 'tagIds'], {
    subscriberIds: { ...ids(MAX.bulkSubscribers), minItems: 1, description: '1-10,000 distinct subscriber ids.' },
    tagIds: { ...ids(MAX.tagIds), minItems: 1, description: '1-1,000 distinct tag ids of the account.' },
  }),
  SkippedByStatus: {
    type: 'object',
    propertyNames: { enum: [...STATUSES, 'NOT_FOUND'] },
    additionalProperties: { ...int32, minimum: 1 },
    description: 'Skipped subscribers by reason: `NOT_FOUND` (not in the account) or their status (`BLOCKED`). Reasons with no subscriber are absent.',
  },
  SelectedSubscriberTaggingAddResult: object(
    ['selectedSubscriberCount', 'taggedSubscriberCount', 'alreadyTaggedSubscriberCount', 'skippedSubscriberCount', 'skippedByStatus'],
    { ...taggingCounts(['selectedSubscriberCount', 'taggedSubscriberCount', 'alreadyTaggedSubscriberCount', 'skippedSubscriberCount']), skippedByStatus: schemaRef('SkippedByStatus') },
  ),
  SelectedSubscriberTaggingRemovalResult: object(
    ['selectedSubscriberCount', 'updatedSubscriberCount', 'withoutSelectedTagsSubscriberCount', 'skippedSubscriberCount', 'skippedByStatus'],
    { ...taggingCounts(['selectedSubscriberCount', 'updatedSubscriberCount', 'withoutSelectedTagsSubscriberCount', 'skippedSubscriberCount']), skippedByStatus: schemaRef('SkippedByStatus') },
  ),
  FieldType: { type: 'string', enum: [...FieldTypes.names] },
  FieldOption: object(['id', 'label', 'position', 'active'], {
    id: uuid,
    label: { type: 'string' },
    position: { ...int32, minimum: 0, description: 'Order within the field\'s options.' },
    active: { type: 'boolean', description: 'False: kept for stored values, not selectable for new ones.' },
  }),
  Field: object(['type', 'personalizationTagName', 'label', 'fieldType', 'required', 'internal', 'active', 'position', 'options'], {
    type: { type: 'string', enum: ['BUILT_IN', 'CUSTOM'] },
    builtInField: { type: 'string', enum: ['EMAIL', 'FIRST_NAME'], description: 'Present only on built-in fields.' },
    fieldId: { ...uuid, description: 'Present only on custom fields.' },
    personalizationTagName: { type: 'string' },
    label: { type: 'string' },
    fieldType: schemaRef('FieldType'),
    required: { type: 'boolean' },
    internal: { type: 'boolean', description: 'Hidden from subscriber-facing forms and profile editing.' },
    active: { type: 'boolean', description: 'False once archived.' },
    position: { ...int32, minimum: 0, description: 'Built-ins 0 and 1, custom fields from 2.' },
    options: { type: 'array', items: schemaRef('FieldOption'), description: 'Options of choice fields (inactive ones included), by position; empty otherwise.' },
  }),
  FieldCatalog: object(['fields'], { fields: { type: 'array', items: schemaRef('Field'), description: 'Built-ins first, then custom fields by position.' } }),
  AddField: object(['label', 'fieldType'], {
    personalizationTagName: {
      type: 'string',
      pattern: '^(|[a-z][a-z0-9_]{0,63})$',
      [ERROR_IDS_KEYWORD]: { pattern: 'invalid_personalization_tag_name' },
      description: 'Lowercase ASCII `^[a-z][a-z0-9_]{0,63}$`; empty or missing: derived from the label.',
    },
    label: { type: 'string', minLength: 1, maxLength: MAX.label, description: 'Trimmed; 1-255 characters.' },
    fieldType: schemaRef('FieldType'),
    required: { type: 'boolean', default: false },
    internal: { type: 'boolean', default: false },
    options: { type: 'array', items: { type: 'string', minLength: 1, maxLength: MAX.label }, maxItems: MAX.options, description: 'Option labels of a choice field (1-500); empty or missing for other types.' },
  }),
  FieldOptionUpdate: object(['label'], {
    id: { ...nullable(uuid), description: 'An option of this field; null or missing adds a new option.' },
    label: { type: 'string', minLength: 1, maxLength: MAX.label },
    position: { ...int32, minimum: 0, description: 'Default: the option\'s place in the list.' },
    active: { type: 'boolean', description: 'Default true; false deactivates the option.' },
  }),
  UpdateField: object([], {
    label: { type: 'string', minLength: 1, maxLength: MAX.label },
    required: { type: 'boolean' },
    internal: { type: 'boolean' },
    position: { ...int32, minimum: 0 },
    options: { type: 'array', items: schemaRef('FieldOptionUpdate'), maxItems: MAX.options, description: 'The complete option list (see the operation).' },
  }),
  FieldUsage: fieldUsage,
  UsageSource: object(['service', 'answered'], {
    service: { type: 'string', description: 'A service that may use subscriber fields (segment, form, messaging, rss, ...).' },
    answered: { type: 'boolean' },
    error: { type: 'string', description: 'Why it did not answer (only when `answered` is false).' },
  }),
  FieldUsageReport: object(
    ['fieldId', 'fieldLabel', 'personalizationTagName', 'fieldType', 'subscriberValueCount', 'archiveBlocked', 'permanentDeleteBlocked', 'blockingUsages', 'warningUsages', 'contentMergeTagUsages', 'permanentDeleteBlockingUsages', 'externalHints', 'sources'],
    {
      fieldId: uuid,
      fieldLabel: { type: 'string' },
      personalizationTagName: { type: 'string' },
      fieldType: schemaRef('FieldType'),
      subscriberValueCount: { ...int64, description: 'Subscribers holding a value of the field (a multi-option value counts once).' },
      archiveBlocked: { type: 'boolean', description: 'Write usages block archival, or a source did not answer.' },
      permanentDeleteBlocked: { type: 'boolean', description: 'Usages block a future permanent delete, or a source did not answer.' },
      blockingUsages: { type: 'array', items: schemaRef('FieldUsage'), description: 'Write usages that block archival.' },
      warningUsages: { type: 'array', items: schemaRef('FieldUsage'), description: 'Read or control usages that continue after archival.' },
      contentMergeTagUsages: { type: 'array', items: schemaRef('FieldUsage'), description: 'Live merge tags in sendable content; they do not block archival.' },
      permanentDeleteBlockingUsages: { type: 'array', items: schemaRef('FieldUsage') },
      externalHints: { type: 'array', items: schemaRef('FieldUsage'), description: 'External write-path notices; they do not block archival.' },
      sources: { type: 'array', items: schemaRef('UsageSource'), description: 'Every service asked for its usages (an addition to the specification\'s record).' },
    },
  ),
  FieldFormUseDto: object(['id', 'name'], { id: uuid, name: { type: 'string' } }),
  Tag: object(['id', 'name', 'subscriberCount', 'createdAt'], { id: uuid, name: { type: 'string' }, subscriberCount: int64, createdAt: instant }),
  TagList: object(['items'], { items: { type: 'array', items: schemaRef('Tag') } }),
  AddTag: object(['name'], { name: { type: 'string', minLength: 1, maxLength: MAX.tagName, description: 'Trimmed, 1-100 characters, unique in the account ignoring case.' } }),
  RenameTag: object(['name'], { name: { type: 'string', minLength: 1, maxLength: MAX.tagName } }),
  Topic: object(['id', 'label', 'description', 'active', 'isDefault', 'subscriberCount', 'createdAt'], {
    id: uuid,
    label: { type: 'string' },
    description: { type: ['string', 'null'] },
    active: { type: 'boolean' },
    isDefault: { type: 'boolean', description: 'The topic subscribers join when created without topicIds; exactly one per account at all times (`Newsletter` until the flag is moved).' },
    subscriberCount: { ...int64, description: 'Current subscribers of the topic.' },
    createdAt: instant,
  }),
  TopicList: object(['items'], { items: { type: 'array', items: schemaRef('Topic') } }),
  AddTopic: object(['label'], {
    label: { type: 'string', minLength: 1, maxLength: MAX.topicLabel, description: 'Shown to readers; trimmed, 1-255 characters.' },
    description: { type: ['string', 'null'], maxLength: MAX.description },
    enrollExistingSubscribers: { type: 'boolean', default: false },
    isDefault: { type: 'boolean', default: false, description: 'Make the new topic the account\'s default (the flag moves from the previous default).' },
  }),
  UpdateTopic: object([], {
    label: { type: 'string', minLength: 1, maxLength: MAX.topicLabel },
    description: { type: ['string', 'null'], maxLength: MAX.description, description: 'null clears it.' },
    active: { type: 'boolean' },
    isDefault: { type: 'boolean' },
  }),
};
