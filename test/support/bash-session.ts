// One bash shell that examples are pasted into, one after the other, as a reader does in a terminal:
// variables and functions an example defines stay for the next. Each example runs with
// `set -euo pipefail` (a failing command or an unset variable stops the shell, and the test fails
// with what it printed), its stdin from /dev/null (a command reading stdin cannot swallow the
// next example), and `curl` wrapped to report every HTTP call's status on stderr (the examples'
// own output is untouched).
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface HttpCall {
  status: number;
  method: string;
  url: string;
}

export interface ExampleRun {
  stdout: string;
  /** stderr without the curl wrapper's lines. */
  stderr: string;
  calls: HttpCall[];
}

const CALL = '@@http';
const PRELUDE = `set -euo pipefail
curl() { command curl -w '%{stderr}${CALL} %{http_code} %{method} %{url_effective}\\n' "$@"; }
`;

export class BashSession {
  private readonly child: ChildProcess;
  private readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailer-examples-'));
  private out = '';
  private err = '';
  private count = 0;
  private readonly exited: Promise<void>;

  /** `env` is the whole environment (a fresh terminal's, not the test runner's). */
  constructor(cwd: string, env: Record<string, string>) {
    // Its own process group: what the examples start in the background (servers) is stopped with it.
    this.child = spawn('bash', ['--noprofile', '--norc'], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    this.child.stdout!.on('data', (c: Buffer) => (this.out += c.toString()));
    this.child.stderr!.on('data', (c: Buffer) => (this.err += c.toString()));
    this.exited = new Promise((resolve) => this.child.once('exit', () => resolve()));
    this.child.stdin!.write(PRELUDE);
  }

  /** Runs `code` in the shell and resolves once it is done; throws with its output if the shell exits or it takes too long. */
  async run(code: string, timeoutMs = 30_000): Promise<ExampleRun> {
    const n = ++this.count;
    const file = path.join(this.dir, `${n}.sh`);
    fs.writeFileSync(file, code);
    const mark = `@@done ${n}\n`;
    const [outFrom, errFrom] = [this.out.length, this.err.length];
    this.child.stdin!.write(`source '${file}' < /dev/null\necho '@@done ${n}'; echo '@@done ${n}' >&2\n`);
    const deadline = Date.now() + timeoutMs;
    const printed = () => `stdout:\n${this.out.slice(outFrom)}\nstderr:\n${this.err.slice(errFrom)}`;
    while (this.out.indexOf(mark, outFrom) < 0 || this.err.indexOf(mark, errFrom) < 0) {
      if (this.child.exitCode !== null) throw new Error(`the shell stopped (exit code ${this.child.exitCode}): a command failed\n${printed()}`);
      if (Date.now() > deadline) throw new Error(`not done after ${timeoutMs} ms\n${printed()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const stdout = this.out.slice(outFrom, this.out.indexOf(mark, outFrom));
    const errText = this.err.slice(errFrom, this.err.indexOf(mark, errFrom));
    const lines = errText.split('\n');
    const calls = lines.filter((l) => l.startsWith(`${CALL} `)).map((l) => {
      const [, status, method, url] = l.split(' ');
      return { status: Number(status), method, url };
    });
    return { stdout, stderr: lines.filter((l) => !l.startsWith(`${CALL} `)).join('\n'), calls };
  }

  /** The value of a shell variable the examples set. */
  async value(name: string): Promise<string> {
    return (await this.run(`printf '%s\\n' "$${name}"\n`)).stdout.trim();
  }

  /** Stops the shell and everything it started (its process group). */
  async stop(): Promise<void> {
    try {
      process.kill(-this.child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
    await this.exited;
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The JSON objects and arrays in `text`, in order (curl prints bodies without a newline between them; other text is skipped). */
export function jsonValues(text: string): any[] { // eslint-disable-line @typescript-eslint/no-explicit-any
  const values = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"' && depth > 0) inString = true;
    else if (c === '{' || c === '[') {
      if (depth++ === 0) start = i;
    } else if ((c === '}' || c === ']') && depth > 0 && --depth === 0) {
      values.push(JSON.parse(text.slice(start, i + 1)));
    }
  }
  return values;
}
