// Account scoping is a type: a query of account-owned documents that does not name the account does
// not compile (fixtures/scoped-queries.ts marks each such line with @ts-expect-error).
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const FIXTURE = path.join(__dirname, 'fixtures', 'scoped-queries.ts');
const OPTIONS: ts.CompilerOptions = {
  strict: true,
  noEmit: true,
  skipLibCheck: true,
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.CommonJS,
  moduleResolution: ts.ModuleResolutionKind.Node10,
  esModuleInterop: true,
};

/** The compiler's complaints about `source` (compiled as the fixture's file), one line each. */
function diagnostics(source: string): string[] {
  const host = ts.createCompilerHost(OPTIONS);
  const read = host.readFile;
  host.readFile = (file) => (path.resolve(file) === FIXTURE ? source : read(file));
  const program = ts.createProgram([FIXTURE], OPTIONS, host);
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const line = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : 0;
    // TS2345 (an argument) or TS2322 (a member of an object literal): the filter is not assignable
    const what = d.code === 2345 || d.code === 2322 ? 'not assignable' : `TS${d.code}`;
    return `${path.basename(d.file?.fileName ?? '')}:${line} ${what}`;
  });
}

const fixture = fs.readFileSync(FIXTURE, 'utf8');

describe('account scoping by type', () => {
  it('compiles the scoped queries and the named cross-account ones, and refuses every unscoped one', () => {
    expect(diagnostics(fixture)).toEqual([]);
  }, 60_000);

  it('each refused line is refused for the filter (without the directives they are errors)', () => {
    const refused = fixture.split('\n').flatMap((line, i) => (line.trim().startsWith('// @ts-expect-error') ? [`scoped-queries.ts:${i + 2} not assignable`] : []));
    expect(refused).toHaveLength(5);
    expect(diagnostics(fixture.replace(/\/\/ @ts-expect-error[^\n]*/g, '//'))).toEqual(refused);
  }, 60_000);
});
