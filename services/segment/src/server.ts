import type { ServiceContext } from '@mailer/kit/service';
import { commonV1, segmentV1 } from '@mailer/proto';
import type { Config } from './config';

/** Registers the segment service's handlers. Its domain arrives in a later issue. */
export async function setup(ctx: ServiceContext<Config>): Promise<void> {
  ctx.grpc.add(segmentV1.SegmentServiceService, {
    describe: async () => ({ service: 'segment', protoPackage: segmentV1.protobufPackage }),
  });
  // The subscriber service asks every service that can use a subscriber field before a field is
  // archived or deleted. This service's own usages (its artifacts referencing fields) are reported
  // here once they exist; until then it answers, truthfully, that it uses none.
  ctx.grpc.add(commonV1.FieldUsageServiceService, {
    listFieldUsages: async () => ({ usages: [] }),
  });
}
