// The repository explains itself: every link of its markdown reaches a file of the repository (and
// the heading it names), and nothing in it refers to a document kept outside the repository.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { headingAnchors, markdownLinks } from './support/markdown-links';

const ROOT = path.resolve(__dirname, '..');
const tracked = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' }).split('\n').filter(Boolean);
const markdown = tracked.filter((f) => f.endsWith('.md') && fs.existsSync(path.join(ROOT, f)));

describe('markdown links', () => {
  it.each(markdown)('%s: every relative link reaches a file, and the heading its anchor names', (file) => {
    const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
    const broken: string[] = [];
    for (const link of markdownLinks(text)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(link.target)) continue; // http:, mailto:, ...
      const [target, anchor] = link.target.split('#', 2) as [string, string | undefined];
      const resolved = target === '' ? path.join(ROOT, file) : path.resolve(path.dirname(path.join(ROOT, file)), decodeURI(target));
      if (!resolved.startsWith(ROOT + path.sep) && resolved !== ROOT) broken.push(`${file}:${link.line} ${link.target}: outside the repository`);
      else if (!fs.existsSync(resolved)) broken.push(`${file}:${link.line} ${link.target}: no such file`);
      else if (anchor && resolved.endsWith('.md') && !headingAnchors(fs.readFileSync(resolved, 'utf8')).has(anchor)) {
        broken.push(`${file}:${link.line} ${link.target}: no heading with that anchor`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('the README is the short front door, and links to every document of docs/', () => {
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    expect(readme.split('\n').length).toBeLessThanOrEqual(160);
    const linked = new Set(markdownLinks(readme).map((l) => l.target.split('#')[0]));
    const docs = fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md'));
    expect(docs.filter((d) => !linked.has(`docs/${d}`))).toEqual([]);
  });

  it('finds a missing file, a missing anchor and a link outside the repository (the check itself)', () => {
    const links = markdownLinks('see [a](docs/x.md#part), ![img](pic.png) and `[not](code.md)`\n\n```\n[no](fenced.md)\n```\n[b](../out.md)');
    expect(links.map((l) => l.target)).toEqual(['docs/x.md#part', 'pic.png', '../out.md']);
    expect(headingAnchors('# Sending email\n## The `Idempotency-Key` (24 h)\n## Sending email\n')).toEqual(
      new Set(['sending-email', 'the-idempotency-key-24-h', 'sending-email-1']),
    );
  });
});

describe('self-contained', () => {
  // Words that name the documents we keep outside the repository.
  const OUTSIDE = /\.\.\/shared|\bAPI\.md\b|\bDESIGN\.md\b|customer-api-spec/;

  it('no tracked file refers to a document outside the repository', () => {
    const text = tracked.filter((f) => !/(^|\/)(node_modules|dist)\//.test(f) && !/\.(png|ico|lock)$/.test(f) && f !== 'package-lock.json' && f !== 'test/docs-links.test.ts');
    const hits = text.flatMap((f) => {
      const full = path.join(ROOT, f);
      if (!fs.existsSync(full)) return [];
      return fs
        .readFileSync(full, 'utf8')
        .split('\n')
        .flatMap((line, i) => (OUTSIDE.test(line) ? [`${f}:${i + 1}: ${line.trim().slice(0, 120)}`] : []));
    });
    expect(hits).toEqual([]);
  });
});
