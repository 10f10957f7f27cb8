// The processes a SegmentService integration test talks to: nats-server, the subscriber service
// (writes and catalog), the segment service (projection, segments, purchases) and the peers a file
// asks for, started once per file and stopped after it.
import { createClient } from '@mailer/kit';
import { segmentV1, subscriberV1 } from '@mailer/proto';
import type { RunningService, ServiceName } from '@mailer/testing';
import { startSubscriberStack, type SubscriberStack } from '@mailer/testing/subscriber';

export interface SegmentStack {
  env: SubscriberStack;
  segment: RunningService;
  client: ReturnType<typeof createClient<segmentV1.SegmentServiceClient>>;
}

/**
 * Registers beforeAll/afterAll; the returned object is filled once beforeAll ran. `peers`: more real
 * services (rss and messaging are asked before a segment is deleted).
 */
export function useSegmentStack(segmentEnv: NodeJS.ProcessEnv = {}, peers: ServiceName[] = []): SegmentStack {
  const stack = {} as SegmentStack;
  beforeAll(async () => {
    stack.env = await startSubscriberStack({}, peers);
    await stack.env.mesh.start(['segment'], { segment: segmentEnv });
    stack.segment = stack.env.mesh.get('segment');
    stack.client = createClient(segmentV1.SegmentServiceClient, stack.segment.address, 20_000);
  }, 60_000);
  afterAll(async () => {
    stack.client?.close();
    await stack.env?.stop();
  });
  return stack;
}

export type Cond = segmentV1.SegmentCondition;
export const expr = (...groups: Cond[][]): segmentV1.SegmentExpression => ({ conditionGroups: groups.map((conditions) => ({ conditions })) });
export const operand = (o: Partial<segmentV1.SegmentOperand>): segmentV1.SegmentOperand => ({ kind: OK.SEGMENT_OPERAND_KIND_NONE, optionIds: [], ...o });

/** The expression's proto enums, short (values read `OP.SEGMENT_OPERATOR_TEXT_EQUALS`). */
export const { SegmentSubjectType: ST, SegmentOperator: OP, SegmentOperandKind: OK, SegmentFieldRefType: FR, PurchaseScopeKind: SK, PurchasePeriodKind: PK } = segmentV1;
export const BIF = subscriberV1.BuiltInField;
