// The example markers of the markdown files: what test/readme-examples.int.test.ts runs is exactly the
// marked blocks, in order; a marker that marks nothing, or a name used twice, is an error, not a
// silently skipped example.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { examplesOf, markdownExamples } from './support/markdown-examples';

const doc = [
  '# Title',
  '```bash',
  'echo not an example',
  '```',
  '<!-- example: first -->',
  '```bash',
  'echo one',
  '',
  'echo two',
  '```',
  'Prose.',
  '<!-- example: snippet -->',
  '````html',
  '<form>```</form>',
  '````',
].join('\n');

it('reads the marked blocks in order with their language, code and line; unmarked blocks are prose', () => {
  expect(markdownExamples(doc, 'doc.md')).toEqual([
    { name: 'first', lang: 'bash', code: 'echo one\n\necho two\n', file: 'doc.md', line: 5 },
    { name: 'snippet', lang: 'html', code: '<form>```</form>\n', file: 'doc.md', line: 12 },
  ]);
});

it('refuses a marker without a fenced block (or a language), and an unclosed block', () => {
  expect(() => markdownExamples('<!-- example: lost -->\nText\n', 'a.md')).toThrow('a.md:1: the example marker "lost" must be followed by a fenced block with a language');
  expect(() => markdownExamples('<!-- example: bare -->\n```\nls\n```\n', 'a.md')).toThrow('must be followed by a fenced block with a language');
  expect(() => markdownExamples('<!-- example: open -->\n```bash\nls\n', 'a.md')).toThrow('a.md:1: the block of example "open" is not closed');
});

it('reads several files in the order given, each name once across them', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'examples-'));
  try {
    const [a, b] = [path.join(dir, 'a.md'), path.join(dir, 'b.md')];
    fs.writeFileSync(a, '<!-- example: one -->\n```bash\necho a\n```\n');
    fs.writeFileSync(b, '<!-- example: two -->\n```bash\necho b\n```\n');
    expect(examplesOf([b, a]).map((e) => [e.name, e.file])).toEqual([['two', b], ['one', a]]);
    fs.writeFileSync(b, '<!-- example: one -->\n```bash\necho b\n```\n');
    expect(() => examplesOf([a, b])).toThrow(`example "one" is named twice: ${a}:1 and ${b}:1`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
