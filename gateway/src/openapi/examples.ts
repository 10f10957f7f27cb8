// Request body examples of the OpenAPI document, by operationId. Swagger UI prefills "Try it out"
// with them and generated docs show them; gateway/test/openapi-examples.test.ts checks that every
// operation with a body has one and that each passes the request validator, and
// gateway/test/openapi-examples.int.test.ts runs every one against a fresh account.

/**
 * Where the examples' ids come from. A fresh account has no tags, topics, custom fields, segments,
 * purchase sources or sender profiles, so an example that needs one names it by a placeholder id
 * that stands for the id another operation answers (`from`, whose own example creates it; `answer`
 * is where its response carries the id). `withRequestExamples` writes this into the description of
 * every operation whose example holds a placeholder; path parameters of the same names come from the
 * same calls. Optional ids are left out of examples that need none to make their point.
 */
const placeholder = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
export const EXAMPLE_IDS = {
  subscriberId: { placeholder: placeholder(1), what: 'a subscriber', from: 'addSubscriber', answer: 'id' },
  tagId: { placeholder: placeholder(2), what: 'a tag', from: 'addTag', answer: 'id' },
  topicId: { placeholder: placeholder(3), what: 'a topic', from: 'addTopic', answer: 'id' },
  fieldId: { placeholder: placeholder(4), what: 'the custom choice field', from: 'addField', answer: 'fieldId' },
  optionId: { placeholder: placeholder(5), what: 'its option "Red"', from: 'addField', answer: 'options[0].id' },
  segmentId: { placeholder: placeholder(6), what: 'a segment', from: 'createSegment', answer: 'id' },
  sourceId: { placeholder: placeholder(7), what: 'a purchase source', from: 'createPurchaseSource', answer: 'id' },
  senderProfileId: { placeholder: placeholder(8), what: 'a sender profile', from: 'createSenderProfile', answer: 'id' },
} as const;
/** Stands for the customer's own feed (no feed answers at this address). */
export const EXAMPLE_FEED_URL = 'https://blog.example.com/feed.xml';

const { subscriberId, tagId, topicId, fieldId, optionId, segmentId, sourceId, senderProfileId } = Object.fromEntries(
  Object.entries(EXAMPLE_IDS).map(([name, id]) => [name, id.placeholder]),
) as Record<keyof typeof EXAMPLE_IDS, string>;

/** The template the email template examples create, which the sending and automation examples use. */
const template = 'order-confirmation';

const subscriber = {
  email: 'ann@example.org',
  firstName: 'Ann',
  fields: [{ fieldId, value: { kind: 'SINGLE_OPTION', optionId } }],
  tags: [tagId],
};

const expression = {
  conditionGroups: [
    {
      conditions: [
        { subjectType: 'FIELD', fieldRef: { type: 'BUILT_IN', builtInField: 'FIRST_NAME' }, operator: 'TEXT_STARTS_WITH', operand: { kind: 'TEXT', text: 'A' } },
        { subjectType: 'TAGS', fieldRef: null, operator: 'OPTION_CONTAINS_ANY', operand: { kind: 'OPTIONS', optionIds: [tagId] } },
      ],
    },
    {
      conditions: [
        {
          subjectType: 'PURCHASES',
          fieldRef: null,
          operator: 'PURCHASE_COUNT_AT_LEAST',
          operand: { kind: 'PURCHASE', purchase: { sourceId, scopeKind: 'ALL_PRODUCTS', period: { kind: 'LAST_DAYS', days: 90 }, count: 2 } },
        },
      ],
    },
  ],
};

const automation = {
  name: 'Order follow-up',
  trigger: { type: 'API_REQUEST', eventKey: 'order.completed' },
  entry: 'ONCE',
  steps: [
    { type: 'SET_FIELD', fieldId, fromProperty: 'colour' },
    { type: 'WAIT', duration: 'P3D' },
    { type: 'IF_IN_SEGMENT', segmentId },
    { type: 'ADD_TAGS', tagIds: [tagId] },
    { type: 'SEND_EMAIL', templateName: template, topicId },
  ],
  active: true,
};

const rssNewsletter = {
  name: 'Blog digest',
  sourceUrl: EXAMPLE_FEED_URL,
  triggerMode: 'SCHEDULE',
  schedule: 'CRON_TZ=Europe/Berlin 0 8 * * 1',
  releasePolicy: 'REVIEW',
  reviewAutoReleaseMinutes: 120,
  senderProfileId,
  topicId,
  subjectPattern: '{{ newsletter.feedTitle }}: {{ items[0].title }}',
  htmlContent: '<h1>{{ newsletter.feedTitle }}</h1>{% for item in items %}<h2><a href="{{ item.link }}">{{ item.title }}</a></h2><p>{{ item.summary }}</p>{% endfor %}',
  cssContent: 'h2 { font-size: 18px; }',
  maxItemsPerIssue: 5,
};

const broadcast = {
  name: 'Spring newsletter',
  templateName: 'spring-newsletter',
  segmentId,
  topicId,
  abTest: { subjects: ['Spring is here', 'Our spring picks for you, {{ subscriber.firstName | default: "friend" }}'], testPercent: 20, decideAfterMinutes: 120, metric: 'HUMAN_CLICKS' },
  sendWindow: { startHour: 8, endHour: 20, timeZoneField: 'time_zone', defaultTimeZone: 'Europe/Berlin' },
};

export const REQUEST_EXAMPLES: Record<string, unknown> = {
  createRssNewsletter: rssNewsletter,
  updateRssNewsletter: { ...rssNewsletter, triggerMode: 'THRESHOLD', schedule: null, minItems: 3, thresholdMaxAgeDays: 14 },
  previewRssFeed: { url: EXAMPLE_FEED_URL },
  resumeRssNewsletter: { rebaseline: true },
  addSubscriber: { ...subscriber, subscriberStatus: 'ACTIVE', topicIds: [topicId] },
  syncSubscribers: {
    mode: 'UPSERT',
    subscribers: [subscriber, { email: 'bob@example.org', subscriberStatus: 'UNSUBSCRIBED' }],
  },
  addSuppression: { email: 'ann@example.org' },
  addTagsToSubscribers: { subscriberIds: [subscriberId], tagIds: [tagId] },
  removeTagsFromSubscribers: { subscriberIds: [subscriberId], tagIds: [tagId] },
  replaceSubscriberData: { ...subscriber, subscriberStatus: 'ACTIVE' },
  replaceSubscriberEmail: { email: 'ann.new@example.org' },
  replaceSubscriberFirstName: { firstName: 'Annie' },
  replaceSubscriberStatus: { subscriberStatus: 'UNSUBSCRIBED' },
  replaceSubscriberTopics: { topicIds: [topicId], overrideOptOuts: false },
  optOutOfTopic: { source: 'preference-center' },
  setFieldValue: { kind: 'SINGLE_OPTION', optionId },
  addField: { label: 'Favourite colour', fieldType: 'SINGLE_CHOICE', personalizationTagName: 'favourite_colour', options: ['Red', 'Green', 'Blue'] },
  updateField: { label: 'Favourite colour', required: false, options: [{ id: optionId, label: 'Red' }, { label: 'Yellow' }] },
  addTag: { name: 'vip' },
  renameTag: { name: 'very-important' },
  addTopic: { label: 'Weekly newsletter', enrollExistingSubscribers: false },
  updateTopic: { label: 'Weekly digest', active: true },
  createSegment: { name: 'A-names and repeat buyers', expression },
  updateSegment: { name: 'A-names and repeat buyers', expression },
  previewSegmentExpression: { expression, topicId },
  createPurchaseSource: { name: 'Web shop', timeZone: 'Europe/Berlin' },
  ingestPurchaseOrders: {
    orders: [
      {
        orderId: 'order-1001',
        email: 'ann@example.org',
        orderedAt: '2024-05-01T10:15:00Z',
        currency: 'EUR',
        amount: 59.9,
        couponCode: 'SPRING10',
        items: [{ productId: 'tea-earl-grey', variantId: '250g' }],
      },
    ],
  },
  setPurchaseBaseline: { capturedOrdersFromUtc: '2024-01-01T00:00:00Z', complete: true },
  reportEmails: { fromDate: '2024-03-01', toDate: '2024-03-31', interval: 'WEEK', timeZone: 'Europe/Berlin' },
  reportSubscribers: { fromDate: '2024-01-01', toDate: '2024-06-30', interval: 'MONTH', timeZone: 'Europe/Berlin' },
  createAutomation: automation,
  updateAutomation: automation,
  reportEvents: { fromDate: '2024-03-01', toDate: '2024-03-31', interval: 'WEEK', timeZone: 'Europe/Berlin' },
  createSenderProfile: { name: 'Newsletter', fromEmail: 'news@example.com', fromName: 'Example News', replyTo: 'support@example.com', isDefault: true },
  updateSenderProfile: { name: 'Newsletter', fromEmail: 'news@example.com', fromName: 'Example Weekly', replyTo: null },
  createSendingDomain: { domain: 'example.com' },
  createEmailTemplate: {
    name: template,
    subject: 'Your order {{ orderId }}',
    html: '<p>Hello {{ subscriber.firstName }}, thank you for order {{ orderId }}.</p>',
    tracking: { opens: true, clicks: false },
  },
  updateEmailTemplate: {
    name: template,
    subject: 'Order {{ orderId }} confirmed',
    html: '<p>Hello {{ subscriber.firstName }}, order {{ orderId }} is confirmed.</p>',
    text: 'Hello {{ subscriber.firstName }}, order {{ orderId }} is confirmed.',
  },
  renderEmailTemplate: { email: 'ann@example.org', substitutionData: { orderId: 'A-1001' } },
  createForm: {
    name: 'Newsletter signup',
    type: 'PAGE',
    inputFields: [
      { fieldRef: { type: 'BUILT_IN', builtInField: 'EMAIL' }, label: 'Your email', isRequired: true },
      { fieldRef: { type: 'BUILT_IN', builtInField: 'FIRST_NAME' }, placeholder: 'Ann', isRequired: false },
      { fieldRef: { type: 'CUSTOM', fieldId }, isRequired: false, inputControl: 'RADIO_GROUP' },
    ],
    topicIds: [topicId],
    doubleOptIn: true,
    routePath: 'join',
    allowedOrigins: ['https://shop.example.com'],
  },
  updateForm: {
    name: 'Newsletter signup (footer)',
    type: 'INLINE',
    inputFields: [{ fieldRef: { type: 'BUILT_IN', builtInField: 'EMAIL' }, isRequired: true }],
    topicIds: [topicId],
    doubleOptIn: false,
  },
  sendCustomEvent: {
    eventKey: 'order.completed',
    email: 'ann@example.org',
    occurredAt: '2024-05-01T10:15:00Z',
    idempotencyKey: 'order-1001',
    properties: { orderId: 'order-1001', total: 59.9, colour: 'Red' },
  },
  sendEmailMessage: {
    name: template,
    email: 'ann@example.org',
    substitutionData: { orderId: 'order-1001', total: '59.90 EUR', items: [{ name: 'Earl Grey', quantity: 2 }] },
    eventProperties: { orderId: 'order-1001' },
  },
  sendEmailMessages: {
    messages: [
      { name: 'order-confirmation', email: 'ann@example.org', substitutionData: { orderId: 'order-1001' }, idempotencyKey: 'order-1001' },
      { name: 'order-confirmation', email: 'bob@example.org', substitutionData: { orderId: 'order-1002' }, idempotencyKey: 'order-1002' },
    ],
  },
  createBroadcast: broadcast,
  updateBroadcast: { ...broadcast, abTest: null, subject: 'Spring is here, {{ subscriber.firstName | default: "friend" }}' },
  scheduleBroadcast: { sendAt: '2025-04-01T07:00:00Z' },
  sendBroadcastTest: { emails: ['editor@example.com'] },
  resendToNonOpeners: { subject: 'In case you missed it: spring is here' },
  createWebhookSubscription: { targetUrl: 'https://hooks.example.com/mailer', event: 'subscriber.created', deliveryContentType: 'application/json' },
  updateWebhookSubscription: { targetUrl: 'https://hooks.example.com/mailer', event: '*', deliveryContentType: 'application/json', active: true },
};

type Operation = { operationId?: string; description?: string; requestBody?: { content?: Record<string, { example?: unknown }> } };

/**
 * The paths with each JSON request body's example (from REQUEST_EXAMPLES, by operationId) filled in,
 * and, in the description of an operation whose example holds placeholder ids, which call answers
 * each real id.
 */
export function withRequestExamples<T>(paths: T): T {
  const operations = Object.entries(paths as Record<string, Record<string, Operation>>).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ call: `${method.toUpperCase()} ${path}`, op })),
  );
  const callOf = new Map(operations.map(({ call, op }) => [op.operationId, call]));
  for (const { op } of operations) {
    const media = op.requestBody?.content?.['application/json'];
    const example = op.operationId ? REQUEST_EXAMPLES[op.operationId] : undefined;
    if (!media || example === undefined) continue;
    media.example = example;
    const text = JSON.stringify(example);
    const used = Object.values(EXAMPLE_IDS).filter((id) => text.includes(id.placeholder));
    if (used.length === 0) continue;
    const lines = used.map((id) => `\`${id.placeholder}\` stands for ${id.what}: the \`${id.answer}\` answered by \`${callOf.get(id.from)}\` (${id.from}).`);
    op.description = `${op.description ? `${op.description}\n\n` : ''}**Example ids** (replace them with your own; see "Examples" above):\n${lines.map((l) => `- ${l}`).join('\n')}`;
  }
  return paths;
}
