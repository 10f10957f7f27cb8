import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';
import { openApiDocument } from '../src/openapi/document';

/**
 * What a client generated from the published document gets: types from openapi-typescript, and a
 * small typed client scenario compiled with tsc, without casts. The scenario only compiles when the
 * discriminated unions are tagged unions of the real kinds (a `never` or `unknown` union fails the
 * assignments; an `any` one leaves the `@ts-expect-error` lines unused, which is an error too).
 */

const SCENARIO = `
import type { components, paths } from './api';

type Schemas = components['schemas'];
const id = '3f0c2a5e-2a7b-4c47-9a43-1d8f3a0e6b21';

// The body of PUT /subscribers/{subscriberId}/field-values/{fieldId}, one per kind.
type SetFieldValue = paths['/subscribers/{subscriberId}/field-values/{fieldId}']['put']['requestBody']['content']['application/json'];
export const text: SetFieldValue = { kind: 'TEXT', text: 'Ann' };
export const values: Schemas['FieldValueRequest'][] = [
  text,
  { kind: 'EMAIL', text: 'ann@example.org' },
  { kind: 'NUMBER', number: 3.5 },
  { kind: 'DATE', date: '2024-02-29' },
  { kind: 'BOOLEAN', booleanValue: true },
  { kind: 'SINGLE_OPTION', optionId: id },
  { kind: 'MULTI_OPTION', optionIds: [id] },
];
// @ts-expect-error not a kind
export const colour: SetFieldValue = { kind: 'COLOUR', text: 'red' };
// @ts-expect-error a TEXT value carries text, not a number
export const textAsNumber: SetFieldValue = { kind: 'TEXT', number: 1 };

// A value read back, narrowed by its kind; the default branch proves every kind is handled.
type Entry = paths['/subscribers/{subscriberId}/field-values']['get']['responses']['200']['content']['application/json']['values'][number];
export function display(entry: Entry): string {
  const v = entry.value;
  switch (v.kind) {
    case 'TEXT':
    case 'EMAIL':
      return v.text;
    case 'NUMBER':
      return v.number.toFixed(2);
    case 'DATE':
      return v.date;
    case 'BOOLEAN':
      return v.booleanValue ? 'yes' : 'no';
    case 'SINGLE_OPTION':
      return \`\${v.optionId} \${v.labels.join()}\`;
    case 'MULTI_OPTION':
      return \`\${v.optionIds.join()} \${v.labels.join()}\`;
    default: {
      const unhandled: never = v;
      return unhandled;
    }
  }
}

// Segment operands, one per kind, inside the body of POST /segments.
type Operand = Schemas['SegmentOperand'];
export const operands: Operand[] = [
  { kind: 'NONE' },
  { kind: 'TEXT', text: 'a' },
  { kind: 'NUMBER', number: 3 },
  { kind: 'DATE', date: '2024-01-31' },
  { kind: 'OPTIONS', optionIds: [id] },
  { kind: 'SEGMENT', segmentId: id },
  { kind: 'PURCHASE', purchase: { scopeKind: 'ALL_PRODUCTS', sourceId: null } },
];
export const createSegment: paths['/segments']['post']['requestBody']['content']['application/json'] = {
  name: 'Ann and friends',
  expression: { conditionGroups: [{ conditions: [{ subjectType: 'FIELD', fieldRef: { type: 'BUILT_IN', builtInField: 'FIRST_NAME' }, operator: 'TEXT_STARTS_WITH', operand: operands[1] }] }] },
};
// @ts-expect-error a TEXT operand needs its text
export const noText: Operand = { kind: 'TEXT' };
// @ts-expect-error a TEXT operand carries no number
export const mixed: Operand = { kind: 'TEXT', text: 'a', number: 3 };
export function operandValue(o: Operand): string {
  switch (o.kind) {
    case 'NONE': return '';
    case 'TEXT': return o.text;
    case 'NUMBER': return String(o.number);
    case 'DATE': return o.date;
    case 'OPTIONS': return o.optionIds.join();
    case 'SEGMENT': return o.segmentId;
    case 'PURCHASE': return o.purchase.scopeKind;
    default: {
      const unhandled: never = o;
      return unhandled;
    }
  }
}

// Errors: errorId is the closed catalogue.
type ErrorBody = paths['/events']['post']['responses']['400']['content']['application/json'];
export function advice(e: ErrorBody): string {
  switch (e.errorId) {
    case 'rate_limited':
      return 'wait for Retry-After';
    case 'validation_failed':
      return (e.details ?? []).map((d) => d.path).join();
    // @ts-expect-error not in the catalogue
    case 'no_such_error':
      return 'unreachable';
    default:
      return e.message;
  }
}
// @ts-expect-error not in the catalogue
export const bogus: Schemas['ErrorMessageDto']['errorId'] = 'no_such_error';

// Sending mail: the README's first mail, then free-form values of any shape, as typed bodies.
type SendMail = paths['/email-messages']['post']['requestBody']['content']['application/json'];
export const firstMail: SendMail = { name: 'welcome', email: 'ann@example.org', substitutionData: { name: 'Ann' } };
export const receipt: SendMail = {
  name: 'order-confirmation',
  email: 'ann@example.org',
  substitutionData: { orderId: 'order-1001', total: 59.9, paid: true, items: [{ name: 'Earl Grey', quantity: 2 }], coupon: null },
  eventProperties: { orderId: 'order-1001', source: { channel: 'shop' } },
};
// @ts-expect-error substitutionData is an object of values, not a string
export const notAnObject: SendMail = { name: 'welcome', email: 'ann@example.org', substitutionData: 'Ann' };
type RenderPreview = NonNullable<paths['/email-templates/{name}/render']['post']['requestBody']>['content']['application/json'];
export const preview: RenderPreview = { email: 'ann@example.org', substitutionData: { name: 'Ann', items: [{ name: 'Earl Grey' }] } };
// What comes back is readable without a cast, as unknown values to narrow.
type StoredMail = paths['/email-messages/{messageId}']['get']['responses']['200']['content']['application/json'];
export const orderIdOf = (m: StoredMail): string | undefined => {
  const orderId = m.eventProperties?.orderId;
  return typeof orderId === 'string' ? orderId : undefined;
};
// A custom event's properties are any JSON value; a form submission's values are by tag name.
type EventProperties = paths['/events']['post']['requestBody']['content']['application/json']['properties'];
export const paid: EventProperties = { plan: { name: 'gold' }, seats: 3 };
export const submittedEmail = (s: Schemas['FormSubmission']): unknown => s.values.email;
`;

// openapi-typescript's CLI, run as a client's build would (its dependencies are ES modules jest cannot load).
const OPENAPI_TS = join(dirname(require.resolve('openapi-typescript/package.json')), 'bin', 'cli.js');

/** openapi-typescript's output for `document`, then the scenario compiled against it: the diagnostics. */
async function compileScenario(document: object): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'mailer-openapi-types-'));
  try {
    writeFileSync(join(dir, 'openapi.json'), JSON.stringify(document));
    await promisify(execFile)(process.execPath, [OPENAPI_TS, join(dir, 'openapi.json'), '--output', join(dir, 'api.d.ts')]);
    writeFileSync(join(dir, 'scenario.ts'), SCENARIO);
    const program = ts.createProgram([join(dir, 'scenario.ts')], {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.CommonJS,
      moduleResolution: ts.ModuleResolutionKind.Node10,
      types: [],
    });
    return ts.getPreEmitDiagnostics(program).map((d) => {
      const where = d.file && d.start !== undefined ? `${d.file.fileName.replace(dir, '')}:${d.file.getLineAndCharacterOfPosition(d.start).line + 1}` : '';
      return `${where} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('types generated from the OpenAPI document (openapi-typescript)', () => {
  it('give tagged unions of the real kinds and a closed errorId: the typed client scenario compiles without casts', async () => {
    expect(await compileScenario(openApiDocument)).toEqual([]);
  }, 120_000); // a code generator and a compiler run

  it('the scenario notices degraded types: without discriminator mappings the field values are `never`, without `additionalProperties: true` free-form objects take no member, and it fails', async () => {
    const degraded = JSON.parse(JSON.stringify(openApiDocument), function (this: Record<string, unknown>, key, value) {
      if (key === 'additionalProperties' && value === true) return undefined;
      return key === 'mapping' && typeof this.propertyName === 'string' ? undefined : value;
    });
    const errors = (await compileScenario(degraded)).join('\n');
    expect(errors).toMatch(/not assignable to type 'never'/);
    // eventProperties' nested object: only the free-form declaration lets a client send it
    expect(errors).toMatch(/Type '\{ channel: string; \}' is not assignable to type 'never'/);
  }, 120_000);
});
