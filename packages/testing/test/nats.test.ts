import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { freePort, natsServerBinary, startNatsServer } from '../src/nats';

// A killed child whose parent is gone stays a zombie until init reaps it, which some sandboxes do
// only every second or so; a zombie holds no port and no files, so it counts as dead.
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return process.platform !== 'linux';
  }
}

function greeting(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = net.connect({ host: '127.0.0.1', port });
    sock.once('data', (buf) => {
      sock.destroy();
      resolve(buf.toString('utf8'));
    });
    sock.once('error', reject);
  });
}

describe('startNatsServer', () => {
  it('starts a JetStream server on a free port and stop() kills it and removes its temp dir', async () => {
    const server = await startNatsServer();
    try {
      expect(server.url).toBe(`nats://127.0.0.1:${server.port}`);
      expect(alive(server.pid)).toBe(true);
      expect(fs.existsSync(server.storeDir)).toBe(true);
      const info = JSON.parse((await greeting(server.port)).replace(/^INFO /, ''));
      expect(info.jetstream).toBe(true);
    } finally {
      await server.stop();
    }
    expect(alive(server.pid)).toBe(false);
    expect(fs.existsSync(server.storeDir)).toBe(false);
    await server.stop(); // idempotent
  });

  it('keeps a caller-owned store dir and can reuse it on a fixed port', async () => {
    const dir = fs.mkdtempSync('/tmp/nats-owned-');
    try {
      const port = await freePort();
      const first = await startNatsServer({ storeDir: dir, port });
      expect(first.port).toBe(port);
      await first.stop();
      expect(fs.existsSync(dir)).toBe(true);
      const second = await startNatsServer({ storeDir: dir, port });
      await second.stop();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fails loudly with the server output when the port is taken', async () => {
    const server = await startNatsServer();
    try {
      await expect(startNatsServer({ port: server.port })).rejects.toThrow(/nats-server output[\s\S]*address already in use/i);
    } finally {
      await server.stop();
    }
  });

  it('runs several servers at once on distinct ports', async () => {
    const servers = await Promise.all([startNatsServer(), startNatsServer(), startNatsServer()]);
    try {
      expect(new Set(servers.map((s) => s.port)).size).toBe(3);
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
    }
  });
});

describe('exit handler', () => {
  // A child process loads the module (as built: it needs its workspace dependencies), starts a
  // server, reports it and then dies the way a broken test run does; the server it started must not
  // outlive it.
  const modulePath = path.join(__dirname, '../dist/nats.js');

  async function orphanCheck(death: string, signal?: NodeJS.Signals): Promise<void> {
    const script = `
      const { startNatsServer } = require(${JSON.stringify(modulePath)});
      startNatsServer().then((s) => {
        console.log(JSON.stringify({ pid: s.pid, storeDir: s.storeDir }));
        process.stdin.once('data', () => { ${death} });
      });`;
    // stderr is discarded: the crash case prints its (intended) stack trace there.
    const child = spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'pipe', 'ignore'] });
    const line = await new Promise<string>((resolve) => child.stdout!.once('data', (b) => resolve(b.toString())));
    const { pid, storeDir } = JSON.parse(line);
    expect(alive(pid)).toBe(true);
    child.stdin!.write('go\n');
    if (signal) child.kill(signal);
    await new Promise((resolve) => child.once('exit', resolve));
    const deadline = Date.now() + 2000;
    while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(alive(pid)).toBe(false);
    expect(fs.existsSync(storeDir)).toBe(false);
  }

  it('kills servers when the process throws', () => orphanCheck('setTimeout(() => { throw new Error("crash"); }, 10);'));
  it('kills servers when the process exits early', () => orphanCheck('process.exit(3);'));
  it('kills servers on SIGTERM', () => orphanCheck('', 'SIGTERM'));
});

describe('freePort', () => {
  it('returns a bindable port', async () => {
    const port = await freePort();
    expect(port).toBeGreaterThan(0);
    await new Promise<void>((resolve, reject) => {
      const srv = net.createServer().once('error', reject).listen(port, '127.0.0.1', () => srv.close(() => resolve()));
    });
  });
});

describe('natsServerBinary', () => {
  it('finds the installed binary', () => {
    expect(natsServerBinary()).toMatch(/nats-server$/);
  });

  it('throws an install hint when absent', () => {
    expect(() => natsServerBinary(['/nonexistent/nats-server'])).toThrow('nats-server not found: apt-get install -y nats-server');
  });
});
