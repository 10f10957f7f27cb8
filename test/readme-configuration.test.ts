// The Configuration tables (docs/configuration.md, the gateway's README) are where an operator looks a setting up: each setting has
// exactly one row (two rows for one name drift apart and contradict each other).
import fs from 'node:fs';
import path from 'node:path';

/** The setting names of the first column of the table under `## Configuration` (`A` / `B`, `A`, `B` rows name several). */
function configurationSettings(readme: string): string[] {
  const text = fs.readFileSync(path.join(__dirname, '..', readme), 'utf8');
  const section = text.split(/^#{1,2} /m).find((s) => s.startsWith('Configuration'));
  if (!section) throw new Error(`${readme} has no "Configuration" section`);
  const rows = section.split('\n').filter((line) => line.startsWith('| `'));
  return rows.flatMap((row) => [...row.split('|')[1].matchAll(/`([^`]+)`/g)].map((m) => m[1]));
}

describe.each(['docs/configuration.md', 'gateway/README.md'])('%s Configuration table', (readme) => {
  it('names each setting once', () => {
    const names = configurationSettings(readme);
    expect(names.length).toBeGreaterThan(5);
    const repeated = names.filter((name, i) => names.indexOf(name) !== i);
    expect(repeated).toEqual([]);
  });
});
