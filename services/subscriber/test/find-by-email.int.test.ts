// FindSubscribersByEmail over real gRPC (the messaging service's batched lookup): each address's
// subscriber or none, in the order asked, read with one store query; another account's subscribers are
// never answered; empty and oversized lists and bad addresses are refused with precise error ids; only
// the processes allowed to call the subscriber service may call it.
import { status } from '@grpc/grpc-js';
import { useServiceIdentity } from '@mailer/kit';
import { harnessCredentials, metricSum } from '@mailer/testing';
import { add, type Env, errorOf, newAccount, S, startEnv } from './support';

let env: Env;
beforeAll(async () => {
  env = await startEnv();
});
afterAll(async () => env?.stop());

const find = (accountId: string, emails: string[]) => env.client.findSubscribersByEmail({ accountId, emails });
/** The store operations the service ran on its subscribers collection so far. */
const storeReads = async () => ({
  find: await metricSum(env.svc, 'store_operation_duration_seconds_count', { collection: 'subscribers', operation: 'find' }),
  findOne: await metricSum(env.svc, 'store_operation_duration_seconds_count', { collection: 'subscribers', operation: 'findOne' }),
  countDocuments: await metricSum(env.svc, 'store_operation_duration_seconds_count', { collection: 'subscribers', operation: 'countDocuments' }),
});

describe('FindSubscribersByEmail', () => {
  it("answers each address asked, in order: its subscriber's id and status, or none; one store query for the list", async () => {
    const a = newAccount();
    const ann = await add(env.client, a, 'ann@example.org', { subscriberStatus: S.SUBSCRIBER_STATUS_ACTIVE });
    const bob = await add(env.client, a, 'bob@example.org');
    const others = Array.from({ length: 40 }, (_, i) => `other${i}@example.org`);
    for (const e of others) await add(env.client, a, e);
    const before = await storeReads();
    const { matches } = await find(a, [' Ann@Example.ORG ', 'nobody@example.org', 'bob@example.org', 'ann@example.org', ...others.slice(0, 20)]);
    expect(await storeReads()).toEqual({ ...before, find: before.find + 1 });
    expect(matches.slice(0, 4)).toEqual([
      { email: 'ann@example.org', subscriberId: ann.id, subscriberStatus: S.SUBSCRIBER_STATUS_ACTIVE },
      { email: 'nobody@example.org', subscriberStatus: S.SUBSCRIBER_STATUS_UNSPECIFIED },
      { email: 'bob@example.org', subscriberId: bob.id, subscriberStatus: bob.subscriberStatus },
      { email: 'ann@example.org', subscriberId: ann.id, subscriberStatus: S.SUBSCRIBER_STATUS_ACTIVE },
    ]);
    expect(matches.slice(4).map((m) => m.email)).toEqual(others.slice(0, 20));
    expect(matches.slice(4).every((m) => m.subscriberId)).toBe(true);
  });

  it("never answers another account's subscriber (tenant isolation)", async () => {
    const [a, b] = [newAccount(), newAccount()];
    const inA = await add(env.client, a, 'shared@example.org');
    const inB = await add(env.client, b, 'shared@example.org');
    await add(env.client, b, 'only-b@example.org');
    expect((await find(a, ['shared@example.org', 'only-b@example.org'])).matches).toEqual([
      { email: 'shared@example.org', subscriberId: inA.id, subscriberStatus: inA.subscriberStatus },
      { email: 'only-b@example.org', subscriberStatus: S.SUBSCRIBER_STATUS_UNSPECIFIED },
    ]);
    expect((await find(b, ['shared@example.org'])).matches[0].subscriberId).toBe(inB.id);
    expect((await find(newAccount(), ['shared@example.org'])).matches).toEqual([{ email: 'shared@example.org', subscriberStatus: S.SUBSCRIBER_STATUS_UNSPECIFIED }]);
  });

  it('takes 1 to 500 addresses; refuses an empty or longer list, a bad address (naming it) and a missing account', async () => {
    const a = newAccount();
    const many = Array.from({ length: 501 }, (_, i) => `r${i}@example.org`);
    expect((await find(a, many.slice(0, 500))).matches).toHaveLength(500);
    expect(await errorOf(find(a, many))).toMatchObject({ code: status.INVALID_ARGUMENT, errorId: 'validation_failed', details: [{ path: 'emails', problem: 'more than 500 entries' }] });
    expect(await errorOf(find(a, []))).toMatchObject({ code: status.INVALID_ARGUMENT, errorId: 'validation_failed', details: [{ path: 'emails', problem: 'empty' }] });
    const bad = await errorOf(find(a, ['ann@example.org', 'bob@example.org', 'not an address']));
    expect(bad).toMatchObject({ code: status.INVALID_ARGUMENT, errorId: 'invalid_email', details: [{ path: 'emails[2]', problem: 'not a valid email address' }] });
    expect(bad.message).toContain('emails[2]');
    expect(await errorOf(find(a, [`${'x'.repeat(250)}@example.org`]))).toMatchObject({ errorId: 'invalid_email', details: [{ path: 'emails[0]' }] });
    expect(await errorOf(find('', ['ann@example.org']))).toMatchObject({ code: status.INVALID_ARGUMENT, errorId: 'validation_failed', details: [{ path: 'accountId' }] });
  });

  it('the messaging service may call it; a process that may not call the subscriber service is refused', async () => {
    const a = newAccount();
    const ann = await add(env.client, a, 'ann@example.org');
    try {
      useServiceIdentity('messaging', harnessCredentials.grpcSecret);
      expect((await find(a, ['ann@example.org'])).matches[0].subscriberId).toBe(ann.id);
      useServiceIdentity('webhook', harnessCredentials.grpcSecret);
      expect(await errorOf(find(a, ['ann@example.org']))).toMatchObject({ code: status.PERMISSION_DENIED });
    } finally {
      useServiceIdentity('gateway', harnessCredentials.grpcSecret);
    }
  });
});
