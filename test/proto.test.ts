// The committed ts-proto output must be exactly what `npm run proto` generates from proto/, and
// proto/ must pass buf lint: a .proto change without regeneration fails here.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const root = path.resolve(__dirname, '..');

function listFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true, recursive: true }).filter((e) => e.isFile()).map((e) => path.relative(dir, path.join(e.parentPath, e.name))).sort();
}

it('committed generated code matches a fresh buf generate (and buf lint passes)', () => {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'mailer-proto-'));
  try {
    execFileSync('bash', [path.join(root, 'scripts/proto.sh'), out], { stdio: 'pipe' });
    const committed = path.join(root, 'proto/src/gen');
    const fresh = path.join(out, 'src/gen');
    expect(listFiles(fresh)).toEqual(listFiles(committed));
    for (const file of listFiles(fresh)) {
      expect({ file, text: fs.readFileSync(path.join(committed, file), 'utf8') }).toEqual({ file, text: fs.readFileSync(path.join(fresh, file), 'utf8') });
    }
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
});

it('every service has one versioned proto package mailer.<service>.v1', () => {
  const services = fs.readdirSync(path.join(root, 'services')).sort();
  for (const s of services) {
    const file = path.join(root, 'proto/mailer', s, 'v1', `${s}.proto`);
    expect(fs.existsSync(file)).toBe(true);
    expect(fs.readFileSync(file, 'utf8')).toContain(`package mailer.${s}.v1;`);
  }
});
