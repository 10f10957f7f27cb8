// The services that can use a subscriber field, asked over gRPC (mailer.common.v1.FieldUsageService)
// whenever a FieldUsageReport is built: all in parallel, each with a short deadline.
import type { ServiceError } from '@grpc/grpc-js';
import { createClient, GrpcStatus } from '@mailer/kit';
import { commonV1 } from '@mailer/proto';
import type { FieldUsage, SourceAnswer, UsageCategory, UsageEffect } from '../domain/usage';

export type UsageSourceName = 'segment' | 'form' | 'messaging' | 'rss';

const CATEGORY_PREFIX = 'FIELD_USAGE_CATEGORY_';
const EFFECT_PREFIX = 'FIELD_USAGE_EFFECT_';

export function usageFromProto(u: commonV1.FieldUsage): FieldUsage {
  const category = (commonV1.FieldUsageCategory[u.category] ?? `${CATEGORY_PREFIX}UNSPECIFIED`).slice(CATEGORY_PREFIX.length) as UsageCategory;
  const effect = (commonV1.FieldUsageEffect[u.effect] ?? `${EFFECT_PREFIX}UNSPECIFIED`).slice(EFFECT_PREFIX.length) as UsageEffect;
  return {
    // FieldUsage.category is a closed enum in the API: a category this service does not know (a
    // newer peer) is shown as an external hint; its effect still decides whether it blocks.
    category: !category || category === 'UNSPECIFIED' ? 'EXTERNAL_HINT' : category,
    area: u.area,
    artifactId: u.artifactId,
    artifactName: u.artifactName,
    status: u.status,
    reason: u.reason,
    link: u.link,
    permanentDeleteBlocking: u.permanentDeleteBlocking,
    effect: effect || 'UNSPECIFIED',
  };
}

export function usageToProto(u: FieldUsage): commonV1.FieldUsage {
  return {
    category: commonV1.FieldUsageCategory[`${CATEGORY_PREFIX}${u.category}` as keyof typeof commonV1.FieldUsageCategory] ?? 0,
    area: u.area,
    artifactId: u.artifactId,
    artifactName: u.artifactName,
    status: u.status,
    reason: u.reason,
    link: u.link,
    permanentDeleteBlocking: u.permanentDeleteBlocking,
    effect: commonV1.FieldUsageEffect[`${EFFECT_PREFIX}${u.effect}` as keyof typeof commonV1.FieldUsageEffect] ?? 0,
  };
}

export interface UsageSources {
  /** Every source's answer (never throws: a failing source is an unanswered one). */
  ask(req: commonV1.ListFieldUsagesRequest, only?: UsageSourceName[]): Promise<SourceAnswer[]>;
  close(): void;
}

export function fieldUsageSources(addresses: Record<UsageSourceName, string>, deadlineMs: number): UsageSources {
  const clients = (Object.keys(addresses) as UsageSourceName[]).map((service) => ({
    service,
    client: createClient(commonV1.FieldUsageServiceClient, addresses[service], deadlineMs),
  }));
  return {
    async ask(req, only) {
      const asked = only ? clients.filter((c) => only.includes(c.service)) : clients;
      return Promise.all(
        asked.map(async ({ service, client }): Promise<SourceAnswer> => {
          try {
            const res = await client.listFieldUsages(req);
            return { service, answered: true, usages: res.usages.map(usageFromProto) };
          } catch (err) {
            const e = err as ServiceError;
            const code = typeof e.code === 'number' ? (GrpcStatus[e.code] ?? String(e.code)) : 'ERROR';
            return { service, answered: false, error: `${code}: ${e.details ?? e.message ?? 'no answer'}` };
          }
        }),
      );
    },
    close() {
      for (const c of clients) c.client.close();
    },
  };
}
