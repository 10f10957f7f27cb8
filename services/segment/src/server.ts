import type { ServiceContext } from '@mailer/kit/service';
import { segmentV1 } from '@mailer/proto';
import type { Config } from './config';

/** Registers the segment service's handlers. Its domain arrives in a later issue. */
export async function setup(ctx: ServiceContext<Config>): Promise<void> {
  ctx.grpc.add(segmentV1.SegmentServiceService, {
    describe: async () => ({ service: 'segment', protoPackage: segmentV1.protobufPackage }),
  });
}
