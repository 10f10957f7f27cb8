import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { openApiDocument } from '../src/openapi/document';

/**
 * The gateway's request types (src/generated/openapi.ts) are generated from the OpenAPI document;
 * the committed file must be what `npm run openapi-types` makes of the document as it is now, so a
 * schema change without regeneration fails here (and the mapping code never compiles against
 * stale types).
 */

const ROOT = join(__dirname, '../..');
const COMMITTED = join(ROOT, 'gateway/src/generated/openapi.ts');

/** The generator's output for `document` (run as a process: openapi-typescript's dependencies are ES modules jest cannot load). */
async function generated(document: object): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'mailer-openapi-types-'));
  try {
    writeFileSync(join(dir, 'openapi.json'), JSON.stringify(document));
    const { stdout } = await promisify(execFile)(process.execPath, [join(ROOT, 'scripts/openapi-types.js'), join(dir, 'openapi.json')], { maxBuffer: 64 * 1024 * 1024 });
    return stdout;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('generated request types (src/generated/openapi.ts)', () => {
  it('are up to date with the OpenAPI document: run `npm run openapi-types` after changing it', async () => {
    const fresh = await generated(openApiDocument);
    // one line, not a 7,000-line diff, when it is stale
    expect(fresh === readFileSync(COMMITTED, 'utf8') ? 'up to date' : 'stale: run `npm run openapi-types`').toBe('up to date');
  }, 60_000);

  it('notice a member added to a request schema', async () => {
    const changed = structuredClone(openApiDocument) as unknown as { components: { schemas: Record<string, { properties: Record<string, unknown> }> } };
    changed.components.schemas.AddTag.properties.colour = { type: 'string' };
    const fresh = await generated(changed);
    expect(fresh).not.toBe(readFileSync(COMMITTED, 'utf8'));
    expect(fresh).toMatch(/AddTag: \{[^}]*colour\?: string;/);
  }, 60_000);

  it('type what the validator fills in as present: members and parameters with a default', () => {
    const committed = readFileSync(COMMITTED, 'utf8');
    // AddTopic.isDefault (default false) and the page parameters (defaults 1 and 50) are never absent after validation
    expect(committed).toMatch(/AddTopic: \{[^}]*\n\s+isDefault: boolean;/);
    expect(committed).toMatch(/listSubscribers: \{\s+parameters: \{\s+query: \{[^}]*\n\s+pageNumber: components\["parameters"\]\["PageNumber"\];/);
    // a member without a default stays optional
    expect(committed).toMatch(/AddTopic: \{[^}]*\n\s+description\?: string \| null;/);
  });
});
