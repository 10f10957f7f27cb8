import { randomBytes } from 'node:crypto';
import { loadConfig } from '@mailer/kit';
import { outboundSettingsOf } from '@mailer/outbound';
import { configSchema } from '../src/config';

// The webhook service reads the outbound guard's exceptions (docs/configuration.md) and refuses to start
// on a value it cannot read, rather than delivering with a guard the operator did not mean.
const exit = (message: string): never => {
  throw new Error(message);
};
const key = () => randomBytes(32).toString('base64');
const sealing = { SECRET_SEALING_KEY: key() };
const load = (env: NodeJS.ProcessEnv) => loadConfig(configSchema, { ...sealing, ...env }, exit);

describe('webhook config: outbound guard settings', () => {
  it('defaults to the production guard', () => {
    expect(outboundSettingsOf(load({}))).toEqual({ allowHttp: false, allowedCidrs: [] });
  });

  it('reads the local runner values', () => {
    const config = load({ OUTBOUND_ALLOW_HTTP: 'true', OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8,::1/128' });
    expect(outboundSettingsOf(config)).toEqual({ allowHttp: true, allowedCidrs: ['127.0.0.0/8', '::1/128'] });
  });

  it('names the bad setting when a value cannot be read', () => {
    expect(() => load({ OUTBOUND_ALLOW_HTTP: 'sometimes' })).toThrow(/OUTBOUND_ALLOW_HTTP: OUTBOUND_ALLOW_HTTP must be true or false/);
    expect(() => load({ OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8,intranet' })).toThrow(/OUTBOUND_ALLOWED_CIDRS: .*"intranet" is not an address range/);
  });
});

describe('webhook config: the sealing keys', () => {
  it('SECRET_SEALING_KEY is required, base64 of 32 bytes; SECRET_SEALING_KEY_PREVIOUS a comma list of such keys', () => {
    const previous = [key(), key()];
    const config = load({ SECRET_SEALING_KEY_PREVIOUS: ` ${previous[0]}, ${previous[1]} ` });
    expect(config.SECRET_SEALING_KEY).toEqual(Buffer.from(sealing.SECRET_SEALING_KEY, 'base64'));
    expect(config.SECRET_SEALING_KEY_PREVIOUS).toEqual(previous.map((k) => Buffer.from(k, 'base64')));
    expect(load({}).SECRET_SEALING_KEY_PREVIOUS).toEqual([]);
    expect(() => loadConfig(configSchema, {}, exit)).toThrow(/SECRET_SEALING_KEY: is required \(base64 of 32 random bytes/);
    expect(() => load({ SECRET_SEALING_KEY: randomBytes(16).toString('base64') })).toThrow(/SECRET_SEALING_KEY: must be base64 of 32 bytes \(got 16\)/);
    expect(() => load({ SECRET_SEALING_KEY_PREVIOUS: `${key()},not-a-key!` })).toThrow(/SECRET_SEALING_KEY_PREVIOUS: entry 2: must be base64/);
  });
});
