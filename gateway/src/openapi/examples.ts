// Request body examples of the OpenAPI document, by operationId. Swagger UI prefills "Try it out"
// with them and generated docs show them; gateway/test/openapi-examples.test.ts checks that every
// operation with a body has one and that each passes the request validator.

const subscriberId = '0b7e6d2c-4f1a-4c3e-9d8b-2a6f5e4c3b21';
const tagId = '5d2c1b0a-9e8f-4a7b-8c6d-5e4f3a2b1c0d';
const topicId = '7a6b5c4d-3e2f-4a1b-9c8d-7e6f5a4b3c2d';
const fieldId = '9c8b7a6f-5e4d-4c3b-8a29-1f0e9d8c7b6a';
const optionId = '2e1d0c9b-8a7f-4e6d-9c5b-4a3f2e1d0c9b';
const segmentId = '4f3e2d1c-0b9a-4877-a665-5d4c3b2a1f0e';
const sourceId = '6a5b4c3d-2e1f-4a0b-9c8d-7e6f5a4b3c2e';

const subscriber = {
  email: 'ann@example.org',
  firstName: 'Ann',
  fields: [
    { fieldId, value: { kind: 'TEXT', text: 'Berlin' } },
    { fieldId: '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d', value: { kind: 'SINGLE_OPTION', optionId } },
  ],
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
  name: 'Welcome series',
  trigger: { type: 'API_REQUEST', eventKey: 'account.created' },
  entry: 'ONCE',
  steps: [
    { type: 'SEND_EMAIL', templateName: 'welcome', topicId },
    { type: 'WAIT', duration: 'P3D' },
    { type: 'IF_IN_SEGMENT', segmentId },
    { type: 'ADD_TAGS', tagIds: [tagId] },
    { type: 'SET_FIELD', fieldId, fromProperty: 'plan.name' },
    { type: 'SEND_EMAIL', templateName: 'tips' },
  ],
  active: true,
};

const rssNewsletter = {
  name: 'Blog digest',
  sourceUrl: 'https://blog.example.com/feed.xml',
  triggerMode: 'SCHEDULE',
  schedule: 'CRON_TZ=Europe/Berlin 0 8 * * 1',
  releasePolicy: 'REVIEW',
  reviewAutoReleaseMinutes: 120,
  senderProfileId: '8b7a6c5d-4e3f-4a2b-9c1d-0e9f8a7b6c5d',
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
  previewRssFeed: { url: 'https://blog.example.com/feed.xml' },
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
  setFieldValue: { kind: 'NUMBER', number: 42 },
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
    name: 'order-confirmation',
    subject: 'Your order {{ orderId }}',
    html: '<p>Hello {{ subscriber.firstName }}, thank you for order {{ orderId }}.</p>',
    tracking: { opens: true, clicks: false },
  },
  updateEmailTemplate: {
    name: 'order-confirmation',
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
    confirmationTemplateName: 'signup-confirmation',
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
    properties: { orderId: 'order-1001', total: 59.9 },
  },
  sendEmailMessage: {
    name: 'order-confirmation',
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

/** The paths with each JSON request body's example (from REQUEST_EXAMPLES, by operationId) filled in. */
export function withRequestExamples<T>(paths: T): T {
  for (const item of Object.values(paths as Record<string, Record<string, { operationId?: string; requestBody?: { content?: Record<string, { example?: unknown }> } }>>)) {
    for (const op of Object.values(item)) {
      const media = op.requestBody?.content?.['application/json'];
      const example = op.operationId ? REQUEST_EXAMPLES[op.operationId] : undefined;
      if (media && example !== undefined) media.example = example;
    }
  }
  return paths;
}
