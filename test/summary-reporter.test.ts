// The closing lines of `npm test` (scripts/jest-summary-reporter.js): a skipped leg is counted and
// named with its reason, never hidden among the passes; a skip without a reason fails the run.
// Jest runs here on a small suite of its own, in a child process, with only that reporter.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const repoRoot = path.resolve(__dirname, '..');
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

function runJest(files: Record<string, string>, args: string[] = []) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reporter-'));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
  const config = { rootDir: dir, testEnvironment: 'node', testMatch: ['**/*.test.js'], reporters: [path.join(repoRoot, 'scripts/jest-summary-reporter.js')] };
  const res = spawnSync(process.execPath, [require.resolve('jest/bin/jest'), '--config', JSON.stringify(config), '--ci', ...args], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
  return { status: res.status, stdout: res.stdout };
}

const SUITE = `
test('runs', () => expect(1 + 1).toBe(2));
test.skip('mongo leg (skipped: MONGODB_URI is unset)', () => undefined);
describe.skip('browser leg (skipped: no Chromium (install it with apt-get install chromium))', () => {
  test('opens a page', () => undefined);
  test('submits a form', () => undefined);
});
`;

it('prints the count of skipped legs and each one with its reason; the run passes', () => {
  const { status, stdout } = runJest({ 'legs.test.js': SUITE });
  expect(stdout).toContain('tests: 1 passed, 0 failed, 3 skipped');
  expect(stdout).toContain('skipped legs: 2\n');
  expect(stdout).toContain('  legs.test.js › mongo leg: MONGODB_URI is unset\n');
  expect(stdout).toContain('  legs.test.js › browser leg (2 tests): no Chromium (install it with apt-get install chromium)\n');
  expect(status).toBe(0);
});

it('a run with nothing skipped says so', () => {
  const { status, stdout } = runJest({ 'plain.test.js': "test('runs', () => expect(true).not.toBe(false));" });
  expect(stdout).toContain('tests: 1 passed, 0 failed, 0 skipped\nskipped legs: 0\n');
  expect(status).toBe(0);
});

it('a skip without a reason is listed and fails the run', () => {
  const { status, stdout } = runJest({ 'legs.test.js': SUITE, 'silent.test.js': "test('runs', () => undefined);\ntest.skip('quietly', () => undefined);\ntest.todo('later');" });
  expect(stdout).toContain('skipped without a reason: 2');
  expect(stdout).toContain('  silent.test.js › quietly\n');
  expect(stdout).toContain('  silent.test.js › later (todo)\n');
  expect(status).toBe(1);
});

it('tests left out by -t are counted as deselected, not as skips without a reason', () => {
  const { status, stdout } = runJest({ 'legs.test.js': SUITE, 'other.test.js': "test('another', () => undefined);\ntest('and more', () => undefined);" }, ['-t', 'runs']);
  expect(stdout).toContain('tests: 1 passed, 0 failed, 5 skipped\nskipped legs: 2\n');
  expect(stdout).toContain('deselected by -t: 2 tests\n');
  expect(status).toBe(0);
});
