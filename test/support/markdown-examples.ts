// The runnable examples of the project's markdown files. A block is runnable when the line before
// its opening fence is an HTML comment naming it (invisible on the forge):
//
//   <!-- example: first-mail -->
//   ```bash
//   curl -s "${H[@]}" ...
//   ```
//
// Other blocks (configuration recipes, DNS records, output shown) are prose. test/readme-examples.int.test.ts
// runs the examples of every file it lists, in order, as a reader pastes them.
import fs from 'node:fs';

export interface MarkdownExample {
  name: string;
  /** The fence's info string (`bash`, `html`, ...). */
  lang: string;
  code: string;
  file: string;
  /** 1-based line of the marker. */
  line: number;
}

const MARKER = /^<!--\s*example:\s*(\S+)\s*-->\s*$/;
const FENCE = /^(`{3,})(\S*)\s*$/;

/** The marked blocks of `text` in order; a marker not followed by a fenced block, or a name used twice, throws. */
export function markdownExamples(text: string, file = '<text>'): MarkdownExample[] {
  const lines = text.split('\n');
  const examples: MarkdownExample[] = [];
  for (let i = 0; i < lines.length; i++) {
    const marker = MARKER.exec(lines[i]);
    if (!marker) continue;
    const where = `${file}:${i + 1}`;
    const open = FENCE.exec(lines[i + 1] ?? '');
    if (!open || !open[2]) throw new Error(`${where}: the example marker "${marker[1]}" must be followed by a fenced block with a language`);
    const end = lines.findIndex((l, j) => j > i + 1 && l.trim() === open[1]);
    if (end < 0) throw new Error(`${where}: the block of example "${marker[1]}" is not closed`);
    examples.push({ name: marker[1], lang: open[2], code: lines.slice(i + 2, end).join('\n') + '\n', file, line: i + 1 });
    i = end;
  }
  return examples;
}

/** The examples of several files, in the order given (one name per example across them). */
export function examplesOf(files: string[]): MarkdownExample[] {
  const all = files.flatMap((file) => markdownExamples(fs.readFileSync(file, 'utf8'), file));
  const seen = new Map<string, MarkdownExample>();
  for (const example of all) {
    const first = seen.get(example.name);
    if (first) throw new Error(`example "${example.name}" is named twice: ${first.file}:${first.line} and ${example.file}:${example.line}`);
    seen.set(example.name, example);
  }
  return all;
}
