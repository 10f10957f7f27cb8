// A fault-injecting stand-in in front of a real service that reports field usages (segment, form, rss,
// messaging): it forwards FieldUsageService and ReferenceService calls to the real service and its
// answers back, except for the fields a test makes fail (UNAVAILABLE, as from a peer that is down). A
// real service cannot be made to fail for one field on demand; stopping it would fail every test of
// the file running meanwhile, and its callers' reconnect backoff would make the recovery slow.
import { Server, ServerCredentials, status, type ServiceError } from '@grpc/grpc-js';
import { createClient } from '@mailer/kit';
import { commonV1, referencesV1 } from '@mailer/proto';

export interface FaultyFieldUsagePeer {
  /** host:port, given to the caller in place of the real service's address. */
  address: string;
  /** Calls about this field fail (UNAVAILABLE) until `heal`. */
  fail(fieldId: string): void;
  heal(): void;
  /** The FieldUsageService requests that passed through, in order. */
  calls: commonV1.ListFieldUsagesRequest[];
  close(): Promise<void>;
}

type Callback<T> = (err: Partial<ServiceError> | null, res?: T) => void;

export async function startFaultyFieldUsagePeer(name: string, target: string): Promise<FaultyFieldUsagePeer> {
  const usages = createClient(commonV1.FieldUsageServiceClient, target, 5_000);
  const references = createClient(referencesV1.ReferenceServiceClient, target, 5_000);
  const failing = new Set<string>();
  const calls: commonV1.ListFieldUsagesRequest[] = [];
  // The real service's error goes back as it came (its metadata carries the errorId).
  const forward = <T>(answer: Promise<T>, callback: Callback<T>) =>
    answer.then(
      (res) => callback(null, res),
      (err: ServiceError) => callback({ code: err.code, details: err.details, metadata: err.metadata }),
    );
  const server = new Server();
  server.addService(commonV1.FieldUsageServiceService, {
    listFieldUsages: ({ request }: { request: commonV1.ListFieldUsagesRequest }, callback: Callback<commonV1.ListFieldUsagesResponse>) => {
      calls.push(request);
      if (failing.has(request.fieldId)) callback({ code: status.UNAVAILABLE, details: `${name} is down` });
      else void forward(usages.listFieldUsages(request), callback);
    },
  } as never);
  server.addService(referencesV1.ReferenceServiceService, {
    listReferences: ({ request }: { request: referencesV1.ListReferencesRequest }, callback: Callback<referencesV1.ListReferencesResponse>) =>
      void forward(references.listReferences(request), callback),
  } as never);
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))));
  return {
    address: `127.0.0.1:${port}`,
    fail: (fieldId) => failing.add(fieldId),
    heal: () => failing.clear(),
    calls,
    async close() {
      usages.close();
      references.close();
      await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
    },
  };
}
