import fs from 'node:fs';
import path from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import { createApp, type AppDeps } from '../src/app';
import { ERROR_CATALOGUE } from '../src/errors';
import { createGatewayMetrics } from '../src/metrics';
import { openApiDocument } from '../src/openapi/document';
import { routesOf } from '../src/route-table';
import { PUBLIC_PREFIXES } from '../src/routes/public-web';
import { fieldOperations, tagOperations, topicOperations } from '../src/routes/catalog';
import { reportOperations } from '../src/routes/reports';
import { segmentOperations } from '../src/routes/segments';
import { SEGMENT_VALIDATION_ERROR_IDS } from '../src/openapi/segment';
import { subscriberOperations } from '../src/routes/subscribers';

// The app is built without listening and without any store: only its route table is read.
function app() {
  const unused = new Proxy({}, { get: () => { throw new Error('not used'); } });
  return createApp({
    logger: unused,
    metrics: createGatewayMetrics(),
    accounts: unused,
    limiter: unused,
    idempotency: unused,
    events: { sink: unused, acceptedKeys: unused },
    clients: unused,
    readiness: unused,
    trustProxy: 0,
    unauthenticatedPerMinute: 60,
    publicWeb: { upstreams: { MESSAGING_HTTP_ADDR: '127.0.0.1:1', FORM_HTTP_ADDR: '127.0.0.1:1' }, perMinute: 60 },
  } as unknown as AppDeps);
}

const repoRoot = path.resolve(__dirname, '..', '..');
const read = (file: string) => fs.readFileSync(file, 'utf8');
/** The TypeScript sources under a folder of the repository (no tests, no builds). */
function sources(dir: string): string[] {
  return fs.readdirSync(path.join(repoRoot, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts') && !/(^|\/)(node_modules|dist|test|bench)\//.test(f))
    .map((f) => path.join(repoRoot, dir, f));
}

const doc = openApiDocument as unknown as {
  paths: Record<string, Record<string, { operationId: string; security?: unknown[]; responses: Record<string, unknown>; parameters?: unknown[] }>>;
  components: { responses: Record<string, { description: string }> };
};

describe('OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const api = await SwaggerParser.validate(structuredClone(openApiDocument) as never);
    expect((api as { openapi: string }).openapi).toBe('3.1.0');
  });

  it('documents exactly the routes registered in Express (and vice versa)', () => {
    const registered = routesOf(app())
      .flatMap((r) => r.methods.map((m) => `${m} ${r.path.replace(/:(\w+)/g, '{$1}')}`))
      .sort();
    // The public web surface is forwarded as HTTP to its owners, not routed here (test/public-web.int.test.ts).
    const documented = Object.entries(doc.paths)
      .filter(([path]) => !PUBLIC_PREFIXES.some((p) => path.startsWith(p.prefix)))
      .flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`))
      .sort();
    expect(registered).toEqual(documented);
    expect(registered).toContain('POST /events');
    expect(registered).toContain('GET /subscribers/{subscriberId}');
  });

  it('every operation has an id and responses; authenticated ones document 401 and 429', () => {
    const ids = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        expect(op.operationId).toBeTruthy();
        ids.add(op.operationId);
        const isPublic = Array.isArray(op.security) && op.security.length === 0;
        if (!isPublic) {
          expect([`${method} ${path}`, op.responses['401']]).toEqual([`${method} ${path}`, expect.anything()]);
          expect(op.responses['429']).toBeDefined();
        }
        if (method === 'post' && !path.startsWith('/account') && !PUBLIC_PREFIXES.some((p) => path.startsWith(p.prefix))) {
          expect(JSON.stringify(op.parameters)).toContain('IdempotencyKey');
          expect(op.responses['422']).toBeDefined();
        }
      }
    }
    expect(ids.size).toBe(Object.values(doc.paths).flatMap((i) => Object.keys(i)).length);
  });

  it('every errorId named in a documented response is in the catalogue, which the description lists', () => {
    const catalogue = new Set(ERROR_CATALOGUE.map((e) => e.errorId));
    for (const response of Object.values(doc.components.responses)) {
      const ids = [...response.description.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]);
      expect(ids.length).toBeGreaterThan(0);
      for (const id of ids) expect(catalogue).toContain(id);
    }
    expect(openApiDocument.info.description).toContain('| 429 | `rate_limited` |');
  });

  it('every errorId the gateway and the services raise is in the catalogue (the gateway\'s with the status it answers)', () => {
    const catalogue = new Map(ERROR_CATALOGUE.map((e) => [e.errorId, e.status]));
    const raised: string[] = [];
    // The admin listener's errors are the operator's, not the API's (not in the document).
    for (const file of sources('gateway/src').filter((f) => !f.includes('/admin/'))) {
      for (const [, status, id] of read(file).matchAll(/new ApiError\(\s*(\d{3}),\s*'([a-z_]+)'/g)) raised.push(`${id} ${status} ${catalogue.get(id)}`);
    }
    expect(raised.length).toBeGreaterThan(20);
    expect(raised.filter((r) => { const [, status, listed] = r.split(' '); return status !== listed; })).toEqual([]);
    // Services raise DomainErrors through @mailer/kit's helpers; the gateway keeps their ids (and maps the gRPC code).
    const services = new Set<string>();
    for (const file of [...sources('services'), ...sources('packages')]) {
      for (const m of read(file).matchAll(/\b(?:invalid|notFound|conflict|failedPrecondition)\(\s*'([a-z]+_[a-z_]+)'|new DomainError\(\s*[\w.]+,\s*'([a-z_]+)'/g)) services.add(m[1] ?? m[2]);
    }
    expect(services.size).toBeGreaterThan(50);
    expect([...services].filter((id) => !catalogue.has(id))).toEqual([]);
  });

  it('every errorId an operation documents is in the catalogue; the subscriber domain\'s ids are all documented', () => {
    const catalogue = new Set(ERROR_CATALOGUE.map((e) => e.errorId));
    const documented = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths)) {
      // Reader pages answer plain HTML pages, not the API's errors.
      if (PUBLIC_PREFIXES.some((p) => path.startsWith(p.prefix))) continue;
      for (const [method, op] of Object.entries(item)) {
        for (const [status, response] of Object.entries(op.responses)) {
          const description = (response as { description?: string }).description;
          if (!description || !/^[45]/.test(status)) continue; // a $ref to a component (checked above), or a success
          const line = description.split('\n').find((l) => l.startsWith('errorId: ')) ?? '';
          expect([`${method} ${path} ${status}`, line]).toEqual([`${method} ${path} ${status}`, expect.stringMatching(/^errorId: `/)]);
          for (const [, id] of line.matchAll(/`([a-z_]+)`/g)) {
            expect([`${method} ${path} ${status}`, id, catalogue.has(id)]).toEqual([`${method} ${path} ${status}`, id, true]);
            documented.add(id);
          }
          const entry = ERROR_CATALOGUE.filter((e) => line.includes(`\`${e.errorId}\``));
          for (const e of entry) expect([`${method} ${path}`, e.errorId, e.status]).toEqual([`${method} ${path}`, e.errorId, Number(status)]);
        }
      }
    }
    const serviceIds = [
      'subscriber_not_found', 'field_not_found', 'tag_not_found', 'topic_not_found', 'option_not_found', 'invalid_uuid', 'duplicate_ids', 'invalid_email',
      'subscriber_status_not_manual', 'field_value_kind_mismatch', 'option_inactive', 'required_field_missing', 'field_options_required',
      'field_options_not_allowed', 'invalid_personalization_tag_name', 'topic_inactive', 'sync_too_many_rows', 'validation_failed',
      'subscriber_email_exists', 'personalization_tag_name_exists', 'tag_name_exists', 'field_archived', 'field_archive_blocked',
      'field_not_archived', 'field_delete_blocked', 'field_usage_unknown', 'topic_is_default',
    ];
    for (const id of serviceIds) expect([id, documented.has(id)]).toEqual([id, true]);
    for (const id of [...serviceIds, 'built_in_field_immutable', 'duplicate_email_in_request']) expect(catalogue).toContain(id);
    // the segment service's ids: documented, and in the catalogue with the status they are answered with
    const status = new Map(ERROR_CATALOGUE.map((e) => [e.errorId, e.status]));
    const segmentIds: Array<[string, number]> = [
      ...SEGMENT_VALIDATION_ERROR_IDS.map((id): [string, number] => [id, 400]),
      ['segment_not_found', 404], ['segment_in_use', 409], ['segment_name_taken', 409], ['catalog_unavailable', 503],
    ];
    for (const [id, code] of segmentIds) expect([id, documented.has(id), status.get(id)]).toEqual([id, true, code]);
    // the report period's ids (@mailer/reports), all 400
    for (const id of ['report_period_invalid', 'report_invalid_time_zone', 'report_too_many_points']) expect([id, documented.has(id), status.get(id)]).toEqual([id, true, 400]);
  });

  it('each route handler validates against the operation documented at its path and method', () => {
    for (const op of [...subscriberOperations, ...fieldOperations, ...tagOperations, ...topicOperations, ...segmentOperations, ...reportOperations]) {
      const path = op.path.replace(/:(\w+)/g, '{$1}');
      expect([op.method, path, doc.paths[path]?.[op.method]?.operationId]).toEqual([op.method, path, op.operationId]);
    }
  });

  it('uses the X-API-Key header security scheme globally', () => {
    expect(openApiDocument.components.securitySchemes.ApiKey).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-API-Key' });
    expect(openApiDocument.security).toEqual([{ ApiKey: [] }]);
  });
});
