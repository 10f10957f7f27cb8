import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { GATEWAY_DEADLINES, SHUTDOWN_EXIT_MS } from '@mailer/kit';
import { configSchema } from '../src/config';
import { OPERATION_DEADLINES } from '../src/routes/deadlines';

const valid = { ADMIN_TOKEN: 'x'.repeat(32), API_KEY_MASTER_KEY: randomBytes(32).toString('base64') };
const problems = (env: Record<string, string>) => {
  const r = configSchema.safeParse(env);
  return r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
};

describe('gateway configuration', () => {
  it('defaults', () => {
    expect(configSchema.parse(valid)).toMatchObject({
      GATEWAY_PORT: 8080,
      GATEWAY_HOST: '0.0.0.0',
      METRICS_HOST: '0.0.0.0',
      ADMIN_PORT: 8081,
      ADMIN_HOST: '127.0.0.1',
      GATEWAY_TRUST_PROXY: 0,
      GATEWAY_UNAUTHENTICATED_PER_MINUTE: 60,
      SUBSCRIBER_GRPC_ADDR: '127.0.0.1:7051',
      SEGMENT_GRPC_ADDR: '127.0.0.1:7052',
      FORM_GRPC_ADDR: '127.0.0.1:7053',
      RSS_GRPC_ADDR: '127.0.0.1:7054',
      MESSAGING_GRPC_ADDR: '127.0.0.1:7055',
      WEBHOOK_GRPC_ADDR: '127.0.0.1:7056',
      NATS_URL: 'nats://127.0.0.1:4222',
      METRICS_PORT: 0,
      LOG_LEVEL: 'info',
    });
  });

  it.each([
    [{}, /ADMIN_TOKEN: is required/],
    [{ ADMIN_TOKEN: 'short' }, /ADMIN_TOKEN: must be at least 32 characters/],
    [{ API_KEY_MASTER_KEY: randomBytes(16).toString('base64') }, /API_KEY_MASTER_KEY: must be base64 of 32 bytes \(got 16\)/],
    [{ API_KEY_MASTER_KEY: 'not base64!' }, /API_KEY_MASTER_KEY: must be base64/],
    [{ GATEWAY_PORT: '70000' }, /GATEWAY_PORT/],
    [{ GATEWAY_TRUST_PROXY: '-1' }, /GATEWAY_TRUST_PROXY/],
    [{ SUBSCRIBER_GRPC_ADDR: 'localhost' }, /SUBSCRIBER_GRPC_ADDR: expected host:port/],
  ])('%p is refused with a clear message', (override, message) => {
    const env: Record<string, string> = { ...valid, ...override };
    if (!('ADMIN_TOKEN' in override) && Object.keys(override).length === 0) delete env.ADMIN_TOKEN;
    expect(problems(env).join('\n')).toMatch(message);
  });

  it('GATEWAY_SHUTDOWN_GRACE_MS outlasts every request deadline, so a rolling update answers the longest request in flight', () => {
    const longest = Math.max(...Object.values(GATEWAY_DEADLINES), ...Object.values(OPERATION_DEADLINES));
    expect(longest).toBe(GATEWAY_DEADLINES.feedRead); // an RSS feed read (14.5 s)
    const { GATEWAY_SHUTDOWN_GRACE_MS: grace } = configSchema.parse(valid);
    expect(grace).toBeGreaterThan(longest);
    expect(problems({ ...valid, GATEWAY_SHUTDOWN_GRACE_MS: String(longest) })).toEqual([]);
    expect(problems({ ...valid, GATEWAY_SHUTDOWN_GRACE_MS: String(longest - 1) }).join('\n')).toMatch(/GATEWAY_SHUTDOWN_GRACE_MS: must be at least 14500 \(the longest deadline of a request/);
    expect(problems({ ...valid, GATEWAY_SHUTDOWN_GRACE_MS: '5000' })).toHaveLength(1);
    // The process exits within the delay, the grace and 3 s: inside what the chart allows every process.
    expect(grace + 3_000).toBeLessThanOrEqual(SHUTDOWN_EXIT_MS);
  });

  it('the process stops at start with the message and exit code 78', () => {
    const main = path.resolve(__dirname, '..', 'dist', 'main.js');
    const r = spawnSync(process.execPath, [main], { env: { PATH: process.env.PATH, ADMIN_TOKEN: 'short' }, encoding: 'utf8', timeout: 20_000 });
    expect(r.status).toBe(78);
    expect(r.stderr).toMatch(/invalid configuration/);
    expect(r.stderr).toMatch(/ADMIN_TOKEN: must be at least 32 characters/);
    expect(r.stderr).toMatch(/API_KEY_MASTER_KEY: is required/);
  });
});
