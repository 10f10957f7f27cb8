import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { configSchema } from '../src/config';

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

  it('the process stops at start with the message and exit code 78', () => {
    const main = path.resolve(__dirname, '..', 'dist', 'main.js');
    const r = spawnSync(process.execPath, [main], { env: { PATH: process.env.PATH, ADMIN_TOKEN: 'short' }, encoding: 'utf8', timeout: 20_000 });
    expect(r.status).toBe(78);
    expect(r.stderr).toMatch(/invalid configuration/);
    expect(r.stderr).toMatch(/ADMIN_TOKEN: must be at least 32 characters/);
    expect(r.stderr).toMatch(/API_KEY_MASTER_KEY: is required/);
  });
});
