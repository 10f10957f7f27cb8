import { Writable } from 'node:stream';
import pino from 'pino';
import { callLogger, createClient, createGrpcServer, createMetrics, currentCall, invalid, type Logger } from '@mailer/kit';
import { commonV1 } from '@mailer/proto';

// The kit's gRPC server on loopback with a real client: every call gets a CallContext (request id
// from metadata or generated, the RPC) and one outcome line; the gateway-to-service path is covered
// end to end in gateway/test/request-id.int.test.ts, the unexpected-error path here.

const lines: Array<Record<string, any>> = []; // eslint-disable-line @typescript-eslint/no-explicit-any
const sink = new Writable({
  write(chunk, _enc, done) {
    for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
    done();
  },
});
const logger: Logger = pino({ level: 'debug', base: { service: 'test' } }, sink);

const SECRET_FIELD = 'do-not-log-this-field-id';
let seenInHandler: { requestId?: string; rpc?: string } = {};
const seenByAccount = new Map<string, string | undefined>();
let server: ReturnType<typeof createGrpcServer>;
let client: ReturnType<typeof createClient<commonV1.FieldUsageServiceClient>>;

beforeAll(async () => {
  server = createGrpcServer({ logger, metrics: createMetrics('test') });
  server.add(commonV1.FieldUsageServiceService, {
    listFieldUsages: async (req) => {
      const ctx = currentCall();
      seenInHandler = { requestId: ctx?.requestId, rpc: ctx?.rpc };
      seenByAccount.set(req.accountId, ctx?.requestId);
      callLogger(logger).info('inside the handler');
      if (req.accountId === 'refuse') throw invalid('validation_failed', `bad ${req.fieldId}`);
      if (req.accountId === 'crash') throw new Error('boom');
      // a service calling another service (here: itself) while serving a request
      if (req.accountId === 'forward') await client.listFieldUsages({ accountId: 'inner', fieldId: '', personalizationTagName: '' });
      return { usages: [] };
    },
  });
  const port = await server.listen('127.0.0.1:0');
  client = createClient(commonV1.FieldUsageServiceClient, `127.0.0.1:${port}`);
});
afterAll(async () => {
  client?.close();
  await server?.shutdown(1_000);
});
beforeEach(() => {
  lines.length = 0;
});

const RPC = '/mailer.common.v1.FieldUsageService/ListFieldUsages';
const ask = (accountId: string, requestId?: string) =>
  client.listFieldUsages({ accountId, fieldId: SECRET_FIELD, personalizationTagName: '' }, requestId ? { metadata: { 'x-request-id': requestId } } : {});

it('binds the caller request id and the RPC to the handler logger and logs the outcome at debug', async () => {
  await ask('ok', 'req-123');
  expect(seenInHandler).toMatchObject({ requestId: 'req-123', rpc: RPC });
  expect(lines.find((l) => l.msg === 'inside the handler')).toMatchObject({ requestId: 'req-123', rpc: RPC });
  expect(lines.find((l) => l.msg === 'rpc handled')).toMatchObject({ level: 20, requestId: 'req-123', rpc: RPC, code: 'OK' });
  expect(JSON.stringify(lines)).not.toContain(SECRET_FIELD);
});

it('generates a request id when the caller sent none or an insane one', async () => {
  await ask('ok');
  const generated = seenInHandler.requestId;
  expect(generated).toMatch(/^[0-9a-f-]{36}$/);
  await ask('ok', 'has space');
  expect(seenInHandler.requestId).toMatch(/^[0-9a-f-]{36}$/);
  expect(seenInHandler.requestId).not.toBe(generated);
  expect(JSON.stringify(lines)).not.toContain('has space');
});

it('logs a domain error with its errorId at info, not its message', async () => {
  await expect(ask('refuse', 'req-refused')).rejects.toMatchObject({ code: 3 });
  const line = lines.find((l) => l.msg === 'rpc refused');
  expect(line).toMatchObject({ level: 30, requestId: 'req-refused', code: 'INVALID_ARGUMENT', errorId: 'validation_failed' });
  expect(JSON.stringify(lines)).not.toContain(SECRET_FIELD);
});

it('logs an unexpected error at error with its stack, and answers INTERNAL without details', async () => {
  await expect(ask('crash', 'req-crash')).rejects.toMatchObject({ code: 13, details: 'internal error' });
  const line = lines.find((l) => l.level === 50);
  expect(line).toMatchObject({ requestId: 'req-crash', rpc: RPC, code: 'INTERNAL', err: { message: 'boom' } });
  expect(line!.err.stack).toContain('grpc-server.test.ts');
});

it('an outgoing call made while serving one forwards its request id', async () => {
  await ask('forward', 'req-outer');
  expect(seenByAccount.get('forward')).toBe('req-outer');
  expect(seenByAccount.get('inner')).toBe('req-outer');
  // outside any call nothing is forwarded: the next call gets a fresh id
  await ask('inner');
  expect(seenByAccount.get('inner')).not.toBe('req-outer');
});
