// A fault-injecting ReferenceService (mailer.common.v1, "who uses this?") for the tests of the kit's
// reference-check client: a test says what it names and makes it not answer. Integration tests run
// the real rss and messaging services instead (startMesh).
import { Server, ServerCredentials, status, type ServiceError } from '@grpc/grpc-js';
import { referencesV1 } from '@mailer/proto';

type Answer = referencesV1.ListReferencesResponse | 'fail';

export interface ReferenceSourceDouble {
  /** host:port, for RSS_GRPC_ADDR / MESSAGING_GRPC_ADDR. */
  address: string;
  /** The record with this id is named by `references` (replacing an earlier answer). */
  refer(id: string, references: referencesV1.Reference[]): void;
  /** Calls about the record with this id fail (UNAVAILABLE) until `reset`. */
  fail(id: string): void;
  reset(): void;
  /** The ids asked about, in order. */
  asked: string[];
  close(): Promise<void>;
}

/** The handlers of a double answering from `answers` (also for a test's own server hosting other doubles). */
export function referenceDouble(answers: Map<string, Answer>, asked: string[] = []) {
  return {
    listReferences(call: { request: referencesV1.ListReferencesRequest }, callback: (err: Partial<ServiceError> | null, res?: referencesV1.ListReferencesResponse) => void) {
      asked.push(call.request.id);
      const answer = answers.get(call.request.id);
      if (answer === 'fail') callback({ code: status.UNAVAILABLE, details: 'the reference source is down' });
      else callback(null, answer ?? { count: 0, references: [] });
    },
  };
}

export async function startReferenceSource(): Promise<ReferenceSourceDouble> {
  const answers = new Map<string, Answer>();
  const asked: string[] = [];
  const server = new Server();
  server.addService(referencesV1.ReferenceServiceService, referenceDouble(answers, asked) as never);
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))));
  return {
    address: `127.0.0.1:${port}`,
    refer: (id, references) => answers.set(id, { count: references.length, references }),
    fail: (id) => answers.set(id, 'fail'),
    reset: () => answers.clear(),
    asked,
    close: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())),
  };
}
