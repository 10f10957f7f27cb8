import { loadConfig } from '@mailer/kit';
import { outboundSettingsOf } from '@mailer/outbound';
import { configSchema } from '../src/config';

// The rss service reads the outbound guard's exceptions (docs/configuration.md) and its polling period, and
// refuses to start on a value it cannot read rather than fetching feeds with a guard nobody meant.
const exit = (message: string): never => {
  throw new Error(message);
};
const load = (env: NodeJS.ProcessEnv) => loadConfig(configSchema, env, exit);

describe('rss config', () => {
  it('defaults to the production guard and a 600 s poll', () => {
    const config = load({});
    expect(outboundSettingsOf(config)).toEqual({ allowHttp: false, allowedCidrs: [] });
    expect(config.RSS_POLL_INTERVAL_SECONDS).toBe(600);
  });

  it('reads the local runner values', () => {
    const config = load({ OUTBOUND_ALLOW_HTTP: 'true', OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8,::1/128', RSS_POLL_INTERVAL_SECONDS: '5' });
    expect(outboundSettingsOf(config)).toEqual({ allowHttp: true, allowedCidrs: ['127.0.0.0/8', '::1/128'] });
    expect(config.RSS_POLL_INTERVAL_SECONDS).toBe(5);
  });

  it('names the bad setting when a value cannot be read', () => {
    expect(() => load({ OUTBOUND_ALLOWED_CIDRS: 'intranet' })).toThrow(/OUTBOUND_ALLOWED_CIDRS/);
    expect(() => load({ RSS_POLL_INTERVAL_SECONDS: '0' })).toThrow(/RSS_POLL_INTERVAL_SECONDS/);
    expect(() => load({ RSS_POLL_INTERVAL_SECONDS: 'often' })).toThrow(/RSS_POLL_INTERVAL_SECONDS/);
  });
});
