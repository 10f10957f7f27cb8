import { commonV1 } from '@mailer/proto';
import { freePort } from '@mailer/testing';
import { createClient, createGrpcServer, createLogger, createMetrics, DomainError, GrpcStatus, peerClient, PeerUnavailable, type PeerSpec } from '../src';

// The one mapping of peer failures (kit/peer.ts), against a real gRPC server and a closed port.

const warnings: unknown[] = [];
const logger = { warn: (obj: unknown) => warnings.push(obj) } as unknown as PeerSpec['logger'];
const peer: PeerSpec = { service: 'usage', errorId: 'usage_service_unavailable', message: 'The usage service is unavailable; retry later.', logger };

let server: ReturnType<typeof createGrpcServer>;
let address: string;
beforeAll(async () => {
  server = createGrpcServer({ logger: createLogger('peer-test', 'silent'), metrics: createMetrics('peer_test') });
  server.add(commonV1.FieldUsageServiceService, {
    async listFieldUsages(req: commonV1.ListFieldUsagesRequest) {
      if (req.fieldId === 'missing') throw new DomainError(GrpcStatus.NOT_FOUND, 'field_not_found', 'field missing does not exist');
      if (req.fieldId === 'lagging') throw new DomainError(GrpcStatus.UNAVAILABLE, 'projection_lagging', 'not caught up; retry shortly');
      if (req.fieldId === 'bug') throw new Error('boom');
      if (req.fieldId === 'slow') await new Promise((r) => setTimeout(r, 500));
      return { usages: [] };
    },
  });
  address = `127.0.0.1:${await server.listen('127.0.0.1:0')}`;
});
afterAll(() => server?.shutdown(1_000));
beforeEach(() => warnings.splice(0));

const ask = (addr: string, fieldId: string, deadlineMs = 3_000) => {
  const client = peerClient(createClient(commonV1.FieldUsageServiceClient, addr, deadlineMs), peer);
  return client.listFieldUsages({ accountId: 'a', fieldId, personalizationTagName: 'x' }).finally(() => client.close());
};
const failureOf = (p: Promise<unknown>) => p.then(() => { throw new Error('expected a failure'); }, (err: unknown) => err);

describe('peerClient', () => {
  it('answers pass through', async () => {
    expect(await ask(address, 'ok')).toEqual({ usages: [] });
  });

  it("the peer's own domain errors pass through with errorId, status and text (also its 503s)", async () => {
    expect(await failureOf(ask(address, 'missing'))).toMatchObject({ code: GrpcStatus.NOT_FOUND, errorId: 'field_not_found', message: 'field missing does not exist' });
    const lagging = await failureOf(ask(address, 'lagging'));
    expect(lagging).toBeInstanceOf(DomainError);
    expect(lagging).not.toBeInstanceOf(PeerUnavailable);
    expect(lagging).toMatchObject({ code: GrpcStatus.UNAVAILABLE, errorId: 'projection_lagging' });
    expect(warnings).toEqual([]);
  });

  it('a closed port: UNAVAILABLE with the fixed text; the cause only in the log', async () => {
    const closed = `127.0.0.1:${await freePort()}`;
    const err = await failureOf(ask(closed, 'ok'));
    expect(err).toBeInstanceOf(PeerUnavailable);
    expect(err).toMatchObject({ code: GrpcStatus.UNAVAILABLE, errorId: 'usage_service_unavailable', message: 'The usage service is unavailable; retry later.' });
    expect((err as Error).message).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|\d{4,5}/);
    expect(warnings).toEqual([expect.objectContaining({ peer: 'usage', code: 'UNAVAILABLE', details: expect.stringContaining('ECONNREFUSED') })]);
  });

  it('past the deadline: the same UNAVAILABLE', async () => {
    expect(await failureOf(ask(address, 'slow', 200))).toMatchObject({ errorId: 'usage_service_unavailable', failure: { code: 'DEADLINE_EXCEEDED' } });
  });

  it("a peer's bug (INTERNAL without errorId) is not dressed up as unavailable", async () => {
    const err = await failureOf(ask(address, 'bug'));
    expect(err).not.toBeInstanceOf(DomainError);
    expect(err).toMatchObject({ code: GrpcStatus.INTERNAL });
  });
});
