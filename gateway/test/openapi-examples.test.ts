import { EXAMPLE_IDS, REQUEST_EXAMPLES } from '../src/openapi/examples';
import { openApiDocument } from '../src/openapi/document';
import { requestValidator, schemaErrors } from '../src/openapi/validator';

interface Operation {
  operationId: string;
  description?: string;
  requestBody?: { content: Record<string, { schema: { $ref?: string }; example?: unknown }> };
}
const operations = Object.entries(openApiDocument.paths as unknown as Record<string, Record<string, Operation>>).flatMap(([path, item]) =>
  Object.entries(item).map(([method, op]) => ({ path, method, op })),
);
// JSON bodies: the public web surface's form posts (POST /u/{token}) are the owner's to read, not the gateway's.
const withBody = operations.filter(({ op }) => op.requestBody?.content['application/json']);

// Path parameters of operations with a body are all UUIDs.
const pathParams = (path: string) => Object.fromEntries([...path.matchAll(/\{(\w+)\}/g)].map(([, name]) => [name, '3f0c2a5e-2a7b-4c47-9a43-1d8f3a0e6b21']));

/** What the gateway would answer for this body: nothing when valid, else the errorId and problems. */
function problems(operationId: string, path: string, example: unknown): unknown {
  try {
    const { itemErrors } = requestValidator(operationId)({ params: pathParams(path), body: structuredClone(example) });
    return itemErrors.map((i) => ({ item: i.index, ...i.error.toDto() })); // sync rows fail one by one
  } catch (err) {
    return (err as { toDto?: () => unknown }).toDto?.() ?? err;
  }
}

describe('request body examples of the OpenAPI document', () => {
  it('every operation with a body has a JSON example', () => {
    expect(withBody.length).toBeGreaterThan(20);
    const missing = withBody.filter(({ op }) => op.requestBody?.content['application/json']?.example === undefined).map(({ op }) => op.operationId);
    expect(missing).toEqual([]);
    // and no example names an operation that does not exist (or has no body)
    expect(Object.keys(REQUEST_EXAMPLES).sort()).toEqual(withBody.map(({ op }) => op.operationId).sort());
  });

  it.each(withBody.map(({ path, method, op }) => [`${method} ${path}`, op] as const))('%s: the example passes the request validator and its schema', (name, op) => {
    const media = op.requestBody!.content['application/json'];
    expect([name, problems(op.operationId, name.split(' ')[1], media.example)]).toEqual([name, []]);
    const schema = media.schema.$ref?.replace('#/components/schemas/', '');
    expect(schema).toBeTruthy();
    expect([name, schemaErrors(schema!, media.example)]).toEqual([name, []]);
  });

  it('an id in an example is a placeholder, and the operation says which call answers the real one (they work in a fresh account)', () => {
    const placeholders = Object.values(EXAMPLE_IDS).map((id) => id.placeholder);
    for (const { op } of withBody) {
      const text = JSON.stringify(op.requestBody!.content['application/json'].example);
      const uuids = text.match(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi) ?? [];
      expect([op.operationId, uuids.filter((u) => !placeholders.includes(u))]).toEqual([op.operationId, []]);
      for (const id of Object.values(EXAMPLE_IDS).filter((i) => text.includes(i.placeholder))) {
        expect(op.description).toContain(`\`${id.placeholder}\` stands for ${id.what}: the \`${id.answer}\` answered by`);
        expect(op.description).toContain(`(${id.from})`);
      }
    }
  });

  it('the check catches a bad example (an unknown member, a wrong kind, a bad sync row)', () => {
    expect(problems('addSubscriber', '/subscribers', { ...(REQUEST_EXAMPLES.addSubscriber as object), colour: 'red' })).toMatchObject({ errorId: 'unknown_property' });
    expect(problems('setFieldValue', '/subscribers/{subscriberId}/field-values/{fieldId}', { kind: 'NUMBER', text: '42' })).toMatchObject({ errorId: 'unknown_property' });
    expect(problems('syncSubscribers', '/subscribers/sync', { subscribers: [{ email: 'a@b.c' }, { email: 'a@b.c', subscriberStatus: 'GONE' }] })).toEqual([
      expect.objectContaining({ item: 1, errorId: 'validation_failed' }),
    ]);
  });
});
