// The services that can use a subscriber field, asked over gRPC (mailer.common.v1.FieldUsageService)
// whenever a FieldUsageReport is built: all in parallel, each with a short deadline.
import { createClient, DomainError, peerFailure, type Logger } from '@mailer/kit';
import { commonV1 } from '@mailer/proto';
import type { FieldUsage, SourceAnswer, UsageCategory, UsageEffect } from '../domain/usage';

export type UsageSourceName = 'segment' | 'form' | 'messaging' | 'rss';

const CATEGORY_PREFIX = 'FIELD_USAGE_CATEGORY_';
const EFFECT_PREFIX = 'FIELD_USAGE_EFFECT_';

export function usageFromProto(u: commonV1.FieldUsage): FieldUsage {
  const category = (commonV1.FieldUsageCategory[u.category] ?? `${CATEGORY_PREFIX}UNSPECIFIED`).slice(CATEGORY_PREFIX.length) as UsageCategory;
  const effect = (commonV1.FieldUsageEffect[u.effect] ?? `${EFFECT_PREFIX}UNSPECIFIED`).slice(EFFECT_PREFIX.length) as UsageEffect;
  return {
    ...u,
    // FieldUsage.category is a closed enum in the API: a category this service does not know (a
    // newer peer) is shown as an external hint; its effect still decides whether it blocks.
    category: !category || category === 'UNSPECIFIED' ? 'EXTERNAL_HINT' : category,
    effect: effect || 'UNSPECIFIED',
  };
}

export function usageToProto(u: FieldUsage): commonV1.FieldUsage {
  return {
    ...u,
    category: commonV1.FieldUsageCategory[`${CATEGORY_PREFIX}${u.category}` as keyof typeof commonV1.FieldUsageCategory] ?? 0,
    effect: commonV1.FieldUsageEffect[`${EFFECT_PREFIX}${u.effect}` as keyof typeof commonV1.FieldUsageEffect] ?? 0,
  };
}

export interface UsageSources {
  /** Every source's answer (never throws: a failing source is an unanswered one). */
  ask(req: commonV1.ListFieldUsagesRequest, only?: UsageSourceName[]): Promise<SourceAnswer[]>;
  close(): void;
}

export function fieldUsageSources(addresses: Record<UsageSourceName, string>, deadlineMs: number, logger?: Logger): UsageSources {
  const clients = (Object.keys(addresses) as UsageSourceName[]).map((service) => ({
    service,
    client: createClient(commonV1.FieldUsageServiceClient, addresses[service], deadlineMs),
    // the answer's `error` reaches API clients (usage report, field_usage_unknown): a fixed text, the cause is logged
    peer: { service, errorId: `${service}_service_unavailable`, message: `the ${service} service is unavailable`, logger },
  }));
  return {
    async ask(req, only) {
      const asked = only ? clients.filter((c) => only.includes(c.service)) : clients;
      return Promise.all(
        asked.map(async ({ service, client, peer }): Promise<SourceAnswer> => {
          try {
            const res = await client.listFieldUsages(req);
            return { service, answered: true, usages: res.usages.map(usageFromProto) };
          } catch (err) {
            const failure = peerFailure(peer, err);
            if (failure instanceof DomainError) return { service, answered: false, error: failure.message };
            logger?.error({ err, peer: service }, 'field usage call failed');
            return { service, answered: false, error: `the ${service} service failed to answer` };
          }
        }),
      );
    },
    close() {
      for (const c of clients) c.client.close();
    },
  };
}
