import { loadConfig } from '@mailer/kit';
import { outboundSettingsOf } from '@mailer/outbound';
import { configSchema } from '../src/config';

// The webhook service reads the outbound guard's exceptions (API.md section 4) and refuses to start
// on a value it cannot read, rather than delivering with a guard the operator did not mean.
const exit = (message: string): never => {
  throw new Error(message);
};
const load = (env: NodeJS.ProcessEnv) => loadConfig(configSchema, env, exit);

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
