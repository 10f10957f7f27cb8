// Settings the operator passes as they are: secrets keep their case (the chart and the runner put
// base64url secrets there), domain lists are compared lower-cased.
import { loadConfig } from '@mailer/kit';
import { configSchema, loadMessagingConfig } from '../src/config';

const base = { TRACKING_SECRET: 'A'.repeat(16) + 'b'.repeat(16) };

it('keeps former tracking secrets exactly as given, so links signed with them still verify', () => {
  const previous = ['Zx9_Qw-ErTyUiOpAsDfGhJkLzXcVbNm12', 'MixedCase-Secret-Of-At-Least-32-Chars'];
  const config = loadMessagingConfig({ ...base, TRACKING_SECRET_PREVIOUS: ` ${previous[0]} ,${previous[1]},` });
  expect(config.TRACKING_SECRET_PREVIOUS).toEqual(previous);
});

it('lower-cases the allowed sender domains', () => {
  expect(loadMessagingConfig({ ...base, MAIL_ALLOWED_FROM_DOMAINS: 'Example.ORG, mail.example.com' }).MAIL_ALLOWED_FROM_DOMAINS).toEqual(['example.org', 'mail.example.com']);
});

describe('domain verification settings', () => {
  const key = Buffer.alloc(32, 7).toString('base64');
  const refused = (env: Record<string, string>): string => {
    let message = '';
    const exit = (m: string): never => {
      message = m;
      throw new Error(m);
    };
    expect(() => loadConfig(configSchema, { ...base, ...env }, exit)).toThrow();
    return message;
  };

  it('is off by default (with a warning at start); required needs SECRET_SEALING_KEY', () => {
    const config = loadMessagingConfig(base);
    expect(config).toMatchObject({ MAIL_DOMAIN_VERIFICATION: 'off', DNS_SERVERS: [], SECRET_SEALING_KEY: null });
    expect(refused({ MAIL_DOMAIN_VERIFICATION: 'required' })).toMatch(/SECRET_SEALING_KEY is required with MAIL_DOMAIN_VERIFICATION=required/);
    const required = loadMessagingConfig({ ...base, MAIL_DOMAIN_VERIFICATION: 'required', SECRET_SEALING_KEY: key });
    expect(required.SECRET_SEALING_KEY?.equals(Buffer.alloc(32, 7))).toBe(true);
    expect(refused({ MAIL_DOMAIN_VERIFICATION: 'sometimes' })).toMatch(/MAIL_DOMAIN_VERIFICATION/);
    expect(refused({ SECRET_SEALING_KEY: Buffer.alloc(16).toString('base64') })).toMatch(/base64 of 32 random bytes/);
  });

  it('SECRET_SEALING_KEY_PREVIOUS: a comma list of such keys, newest first, only beside SECRET_SEALING_KEY', () => {
    const previous = [Buffer.alloc(32, 1), Buffer.alloc(32, 2)];
    const config = loadMessagingConfig({ ...base, SECRET_SEALING_KEY: key, SECRET_SEALING_KEY_PREVIOUS: ` ${previous[0].toString('base64')}, ${previous[1].toString('base64')} ` });
    expect(config.SECRET_SEALING_KEY_PREVIOUS).toEqual(previous);
    expect(loadMessagingConfig(base).SECRET_SEALING_KEY_PREVIOUS).toEqual([]);
    expect(refused({ SECRET_SEALING_KEY: key, SECRET_SEALING_KEY_PREVIOUS: 'not-a-key!' })).toMatch(/SECRET_SEALING_KEY_PREVIOUS: entry 1: must be base64/);
    expect(refused({ SECRET_SEALING_KEY_PREVIOUS: key })).toMatch(/SECRET_SEALING_KEY_PREVIOUS needs SECRET_SEALING_KEY/);
  });

  it('DNS_SERVERS: addresses with optional ports, never host names', () => {
    expect(loadMessagingConfig({ ...base, DNS_SERVERS: ' 10.0.0.10, 127.0.0.1:5353,[fd00::53]:53 ,::1' }).DNS_SERVERS).toEqual(['10.0.0.10', '127.0.0.1:5353', '[fd00::53]:53', '::1']);
    for (const bad of ['dns.example.com:53', '10.0.0.10:99999', '[10.0.0.1]:53', '10.0.0.10:']) expect(refused({ DNS_SERVERS: bad })).toMatch(/DNS_SERVERS/);
  });
});
