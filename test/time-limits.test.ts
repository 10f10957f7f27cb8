// The deadlines nest (@mailer/kit time-limits.ts): every limit a service applies to its own work while
// a caller waits is the table's, or a setting that cannot be set past it, so it ends before the
// deadline of the call it serves; and the gateway gives each operation whose service-side work is
// longer than the standard deadline its own. End to end: gateway/test/rss-failures.int.test.ts (a
// feed answering after 13 s is 422 feed_timeout, not 503).
import path from 'node:path';
import { DEADLINE_MARGIN_MS, GATEWAY_DEADLINES, PEER_DEADLINES, TIME_LIMITS } from '@mailer/kit';
import { repoRoot } from '@mailer/testing';

const dist = (file: string) => require(path.join(repoRoot, file));
type Shape = Record<string, { parse(v: unknown): unknown }>;
const shapeOf = (service: string): Shape => dist(`services/${service}/dist/config.js`).configSchema.shape;

/** A setting's default, and whether a value is accepted. */
const setting = (service: string, name: string) => {
  const schema = shapeOf(service)[name];
  return { default: schema.parse(undefined), accepts: (v: number) => { try { schema.parse(String(v)); return true; } catch { return false; } } };
};

it('settings that bound work on a request path default to the limit and cannot be set past it', () => {
  const bounded: Array<[string, string, number]> = [
    ['segment', 'SEGMENT_READ_WAIT_MS', TIME_LIMITS.projectionWait],
    ['segment', 'SUBSCRIBER_DEADLINE_MS', TIME_LIMITS.peerCall],
    ['subscriber', 'FIELD_USAGE_DEADLINE_MS', TIME_LIMITS.peerCall],
    ['subscriber', 'OUTBOX_PUBLISH_WAIT_MS', TIME_LIMITS.publishWait],
    ['subscriber', 'SEGMENT_DEADLINE_MS', PEER_DEADLINES.segmentMembers],
    ['messaging', 'OUTBOX_PUBLISH_WAIT_MS', TIME_LIMITS.publishWait],
  ];
  for (const [service, name, limit] of bounded) {
    const s = setting(service, name);
    expect({ service, name, default: s.default, atLimit: s.accepts(limit), pastLimit: s.accepts(limit + 1) }).toEqual({ service, name, default: limit, atLimit: true, pastLimit: false });
  }
});

it("the services' own limits are the table's", () => {
  expect(dist('services/rss/dist/clients/feed-fetcher.js').FEED_LIMITS.timeoutMs).toBe(TIME_LIMITS.feedRead);
  expect(dist('packages/templates/dist/template.js').RENDER_LIMIT_MS).toBe(TIME_LIMITS.templateRender);
  expect(dist('services/webhook/dist/app/target-check.js').TARGET_DNS_TIMEOUT_MS).toBe(TIME_LIMITS.targetResolve);
});

it('each deadline outlasts the work behind it with the margin to spare', () => {
  const { peerCall, feedRead, feedCheckWait, templateRender, projectionWait, publishWait, backlogWait, targetResolve, batchRender } = TIME_LIMITS;
  const outlasts = (deadline: number, ...steps: number[]) => deadline - steps.reduce((a, b) => a + b, 0) >= DEADLINE_MARGIN_MS;
  // Standard calls: a send (lookup, render, PubAck wait), two lookups in a row (a form's save, a
  // sender profile's delete), a webhook target's resolution.
  expect(outlasts(GATEWAY_DEADLINES.standard, peerCall, templateRender, publishWait)).toBe(true);
  expect(outlasts(GATEWAY_DEADLINES.standard, peerCall, peerCall)).toBe(true);
  expect(outlasts(GATEWAY_DEADLINES.standard, targetResolve)).toBe(true);
  // A feed read after the ids' checks or a check's wait, and a test render.
  expect(outlasts(GATEWAY_DEADLINES.feedRead, Math.max(peerCall, feedCheckWait), templateRender, feedRead)).toBe(true);
  // Segment reads; the member page behind GET /subscribers?segmentId= nests one level deeper.
  expect(outlasts(GATEWAY_DEADLINES.segmentRead, projectionWait, peerCall, peerCall)).toBe(true);
  expect(outlasts(PEER_DEADLINES.segmentMembers, projectionWait, peerCall)).toBe(true);
  expect(outlasts(GATEWAY_DEADLINES.segmentMembers, PEER_DEADLINES.segmentMembers)).toBe(true);
  expect(outlasts(GATEWAY_DEADLINES.bulkWrite, backlogWait, publishWait)).toBe(true);
  // A batch of mail: its lookups and renders (refused unstored past batchRender), then the PubAck wait.
  expect(outlasts(GATEWAY_DEADLINES.batchSend, batchRender, publishWait)).toBe(true);
  expect(dist('services/messaging/dist/mail/app/accept-batch.js').BATCH_RENDER_LIMIT_MS).toBe(batchRender);
});

it('the gateway gives its own deadline to the operations whose work needs it, named as in the OpenAPI document', () => {
  const { OPERATION_DEADLINES } = dist('gateway/dist/routes/deadlines.js');
  const { openApiDocument } = dist('gateway/dist/openapi/document.js');
  const operationIds = new Set<string>();
  for (const item of Object.values(openApiDocument.paths as Record<string, Record<string, { operationId?: string }>>)) for (const op of Object.values(item)) if (op.operationId) operationIds.add(op.operationId);
  for (const id of Object.keys(OPERATION_DEADLINES)) expect({ id, known: operationIds.has(id) }).toEqual({ id, known: true });
  for (const id of ['previewRssFeed', 'createRssNewsletter', 'updateRssNewsletter', 'checkRssNewsletter', 'resumeRssNewsletter']) expect(OPERATION_DEADLINES[id]).toBe(GATEWAY_DEADLINES.feedRead);
  for (const id of ['countSegment', 'previewSegment', 'previewSegmentExpression']) expect(OPERATION_DEADLINES[id]).toBe(GATEWAY_DEADLINES.segmentRead);
  for (const id of ['syncSubscribers', 'addTagsToSubscribers', 'removeTagsFromSubscribers']) expect(OPERATION_DEADLINES[id]).toBe(GATEWAY_DEADLINES.bulkWrite);
});
