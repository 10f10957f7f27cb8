import { CREATE_STATUSES, MANUAL_STATUSES, SyncModes, SyncOutcomes } from '../../mapping/enums';
import { ERROR_IDS_KEYWORD, PER_ITEM_KEYWORD } from '../keywords';
import { instant, ok, ref, schemaRef, uuid } from '../common';
import { body, created, idempotencyKey, noContent, object, posted, responses } from '../operations';
import { SEGMENT_MEMBERS, SEGMENT_MEMBERS_503 } from '../segment/members';
import { emailAddress, firstName, ids, int32, int64, MAX, nullable, STATUSES, subscriberPath, VALUE_400, VALUE_404 } from './shared';
import { fieldValueInputs, fieldValueSchemas } from './field-values';

/** Subscribers: list, create, sync, read, replace their data, topics; bulk tagging (the API contract). */

const SUBSCRIBER_WRITE_400 = [...VALUE_400, 'required_field_missing', 'topic_inactive'];

export const subscriberPaths = {
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
};

export const subscriberParameters = {
  SubscriberId: { name: 'subscriberId', in: 'path', required: true, schema: uuid },
  Email: {
    name: 'email',
    in: 'path',
    required: true,
    schema: { type: 'string', minLength: 1, maxLength: MAX.email, [ERROR_IDS_KEYWORD]: { minLength: 'invalid_email', maxLength: 'invalid_email' } },
    description: 'The email address, percent-encoded in the URL (`ann%40example.org`; Swagger UI encodes what is typed, so type it plain).',
    examples: { plain: { value: 'ann@example.org' } },
  },
};

const taggingCounts = (names: string[]) => Object.fromEntries(names.map((n) => [n, { ...int32, minimum: 0 }]));

/** The field value schemas sit between the sync and the subscriber schemas, where the document has always listed them. */
export const subscriberSchemas = {
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
  ...fieldValueSchemas,
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
};
