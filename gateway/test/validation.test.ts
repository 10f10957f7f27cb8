import { ApiError } from '../src/errors';
import { problemPath, requestValidator, schemaErrors } from '../src/openapi/validator';

function failure(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected a validation error');
}

const event = (extra: Record<string, unknown> = {}) => ({ eventKey: 'order.paid', email: 'ann@example.org', ...extra });
const sendEvent = (body: unknown) => requestValidator('sendCustomEvent')({ body });

describe('request validation from the OpenAPI document', () => {
  it('accepts a valid body and fills defaults', () => {
    expect(sendEvent(event()).body).toEqual({ ...event(), triggerAutomations: true });
    // No default status is filled in: "not given" must reach the service (a sync row keeps the status).
    const add = requestValidator('addSubscriber')({ body: { email: 'a@b.c' } });
    expect(add.body).toEqual({ email: 'a@b.c' });
    expect(requestValidator('addField')({ body: { label: 'L', fieldType: 'TEXT' } }).body).toEqual({ label: 'L', fieldType: 'TEXT', required: false, internal: false });
  });

  it('unknown member -> unknown_property naming it (also nested)', () => {
    const e = failure(() => sendEvent(event({ colour: 'red' })));
    expect(e.toDto()).toEqual({ errorId: 'unknown_property', message: 'Unknown property body.colour.', details: [{ path: 'body.colour', problem: 'is not a known property' }] });
    const nested = failure(() => sendEvent(event({ consent: { source: 's', givenAt: '2024-01-01T00:00:00Z', ip: '1.2.3.4' } })));
    expect(nested.errorId).toBe('unknown_property');
    expect(nested.details).toContainEqual({ path: 'body.consent.ip', problem: 'is not a known property' });
  });

  it('unknown_property wins over other problems but every problem is listed', () => {
    const e = failure(() => sendEvent({ eventKey: 'BAD KEY', extra: 1 }));
    expect(e.errorId).toBe('unknown_property');
    expect(e.details!.map((d) => d.path).sort()).toEqual(['body.email', 'body.eventKey', 'body.extra']);
  });

  it('free-form values accept anything', () => {
    for (const properties of [{ any: { deep: [1, { x: null }] } }, [1, 2], 'text', 5, null, true]) {
      expect(() => sendEvent(event({ properties, _serviceExampleRequest: { whatever: properties } }))).not.toThrow();
    }
  });

  it.each([
    ['eventKey', { eventKey: 'Order' }, 'validation_failed', 'body.eventKey'],
    ['eventKey', { eventKey: '-x' }, 'validation_failed', 'body.eventKey'],
    ['eventKey', { eventKey: 'a'.repeat(101) }, 'validation_failed', 'body.eventKey'],
    ['eventKey', { eventKey: '' }, 'validation_failed', 'body.eventKey'],
    ['email', { email: 'not-an-email' }, 'invalid_email', 'body.email'],
    ['email', { email: 42 }, 'validation_failed', 'body.email'],
    ['occurredAt', { occurredAt: 'yesterday' }, 'validation_failed', 'body.occurredAt'],
    ['occurredAt', { occurredAt: '2024-01-01' }, 'validation_failed', 'body.occurredAt'],
    ['idempotencyKey', { idempotencyKey: '' }, 'validation_failed', 'body.idempotencyKey'],
    ['idempotencyKey', { idempotencyKey: 'x'.repeat(256) }, 'validation_failed', 'body.idempotencyKey'],
    ['triggerAutomations', { triggerAutomations: 'yes' }, 'validation_failed', 'body.triggerAutomations'],
    ['consent', { consent: { source: 's' } }, 'validation_failed', 'body.consent.givenAt'],
    ['consent', { consent: 'yes' }, 'validation_failed', 'body.consent'],
  ])('%s: %p -> %s at %s', (_name, extra, errorId, path) => {
    const e = failure(() => sendEvent(event(extra)));
    expect(e.status).toBe(400);
    expect(e.errorId).toBe(errorId);
    expect(e.details!.map((d) => d.path)).toContain(path);
  });

  it('missing members and non-object bodies -> validation_failed', () => {
    expect(failure(() => sendEvent({ eventKey: 'a' })).details).toEqual([{ path: 'body.email', problem: 'is required' }]);
    for (const body of [[], 'x', 1, null]) expect(failure(() => sendEvent(body)).errorId).toBe('validation_failed');
    expect(failure(() => sendEvent(undefined)).details).toEqual([{ path: 'body', problem: 'is required' }]);
  });

  it('AddSubscriber takes fields/tags/topicIds and restricts the create status', () => {
    for (const member of ['fields', 'tags', 'topicIds']) {
      expect(() => requestValidator('addSubscriber')({ body: { email: 'a@b.c', [member]: [] } })).not.toThrow();
    }
    expect(failure(() => requestValidator('addSubscriber')({ body: { email: 'a@b.c', accountId: 'x' } })).errorId).toBe('unknown_property');
    expect(failure(() => requestValidator('addSubscriber')({ body: { email: 'a@b.c', subscriberStatus: 'BOUNCED' } })).errorId).toBe('validation_failed');
    expect(() => requestValidator('addSubscriber')({ body: { email: 'a@b.c', firstName: null } })).not.toThrow();
  });

  it('path UUIDs -> invalid_uuid', () => {
    const get = requestValidator('getSubscriber');
    expect(get({ params: { subscriberId: '3F0C2A5E-2A7B-4C47-9A43-1D8F3A0E6B21' } }).params).toEqual({ subscriberId: '3F0C2A5E-2A7B-4C47-9A43-1D8F3A0E6B21' }); // any case (the route lowercases it)
    const e = failure(() => get({ params: { subscriberId: 'nope' } }));
    expect(e.toDto()).toEqual({ errorId: 'invalid_uuid', message: 'path.subscriberId must be a UUID.', details: [{ path: 'path.subscriberId', problem: 'must be a UUID' }] });
  });

  it('query: coerced, defaulted, bounded, unknown names refused', () => {
    const list = requestValidator('listSubscribers');
    expect(list({ query: {} }).query).toEqual({ pageNumber: 1, pageSize: 50 });
    expect(list({ query: { pageNumber: '3', pageSize: '1000', status: 'ACTIVE' } }).query).toEqual({ pageNumber: 3, pageSize: 1000, status: 'ACTIVE' });
    for (const query of [{ pageNumber: '0' }, { pageSize: '0' }, { pageSize: '1001' }, { pageSize: 'ten' }, { pageSize: '1.5' }, { status: 'active' }, { pageSize: ['1', '2'] }]) {
      const e = failure(() => list({ query }));
      expect(e.errorId).toBe('validation_failed');
      expect(e.details![0].path).toMatch(/^query\./);
    }
    expect(failure(() => list({ query: { tagId: 'x' } })).errorId).toBe('invalid_uuid');
    expect(failure(() => list({ query: { pagesize: '1' } })).toDto()).toMatchObject({ errorId: 'unknown_property', details: [{ path: 'query.pagesize' }] });
  });

  it('operations without a body ignore one', () => {
    expect(requestValidator('getSubscriber')({ params: { subscriberId: '3f0c2a5e-2a7b-4c47-9a43-1d8f3a0e6b21' }, body: { x: 1 } }).body).toBeUndefined();
  });

  it('problem paths', () => {
    expect(problemPath('body', '')).toBe('body');
    expect(problemPath('body', '/consent/givenAt')).toBe('body.consent.givenAt');
    expect(problemPath('body', '/items/3/id')).toBe('body.items[3].id');
    expect(problemPath('body', '/a~1b', 'c')).toBe('body.a/b.c');
    expect(problemPath('query', '', 'pageSize')).toBe('query.pageSize');
  });

  it('segment operands: one variant per kind, its own member required, other kinds\' members absent or null', () => {
    const operandPath = 'body.expression.conditionGroups[0].conditions[0].operand';
    const create = (operand: unknown) =>
      requestValidator('createSegment')({
        body: { name: 'n', expression: { conditionGroups: [{ conditions: [{ subjectType: 'FIELD', fieldRef: { type: 'BUILT_IN', builtInField: 'FIRST_NAME' }, operator: 'TEXT_STARTS_WITH', operand }] }] } },
      });
    expect(() => create({ kind: 'TEXT', text: 'a' })).not.toThrow();
    expect(() => create({ kind: 'TEXT', text: 'a', number: null, optionIds: null })).not.toThrow();
    expect(() => create({ kind: 'NONE' })).not.toThrow();
    const cases: Array<[unknown, string, string]> = [
      [{ kind: 'COLOUR' }, 'validation_failed', `${operandPath}.kind`],
      [{ kind: 'TEXT' }, 'validation_failed', `${operandPath}.text`],
      [{ kind: 'TEXT', text: 'a', number: 3 }, 'validation_failed', `${operandPath}.number`],
      [{ kind: 'NUMBER', number: 1, colour: 'red' }, 'unknown_property', `${operandPath}.colour`],
      [{ kind: 'OPTIONS', optionIds: Array(1001).fill('3f0c2a5e-2a7b-4c47-9a43-1d8f3a0e6b21') }, 'segment_too_many_option_ids', `${operandPath}.optionIds`],
    ];
    for (const [operand, errorId, path] of cases) {
      const e = failure(() => create(operand));
      expect([operand, e.errorId, e.details?.[0]?.path]).toEqual([operand, errorId, path]);
    }
  });

  it('response schemas are usable for checking responses', () => {
    expect(schemaErrors('ErrorMessageDto', { errorId: 'validation_failed', message: 'y' })).toEqual([]);
    expect(schemaErrors('ErrorMessageDto', { errorId: 'validation_failed' })).not.toEqual([]);
    // errorId is the closed catalogue
    expect(schemaErrors('ErrorMessageDto', { errorId: 'x', message: 'y' })).toEqual([expect.objectContaining({ instancePath: '/errorId', keyword: 'enum' })]);
    expect(() => schemaErrors('Nope', {})).toThrow();
  });
});
