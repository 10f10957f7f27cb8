import type { ServiceRuntime } from '@mailer/kit/service';
import { webhookSubscriptionsV1, webhookV1 } from '@mailer/proto';
import type { TargetCheck } from './app/subscriptions';
import type { Config } from './config';
import { webhookHandlers } from './handlers/describe';
import { subscriptionHandlers } from './handlers/subscriptions';
import { subscriptionRepository } from './store/subscriptions';

/**
 * INTERIM save-time check until i14-guard's `@mailer/outbound` checkUrl is merged (it replaces this
 * function): syntax and scheme only (https, or http when OUTBOUND_ALLOW_HTTP=true).
 */
const interimCheckTarget: TargetCheck = (raw) => {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'not a valid absolute URL' };
  }
  const allowHttp = process.env.OUTBOUND_ALLOW_HTTP === 'true';
  if (url.protocol !== 'https:' && !(allowHttp && url.protocol === 'http:')) return { ok: false, reason: allowHttp ? 'the scheme must be https or http' : 'the scheme must be https' };
  if (url.username || url.password) return { ok: false, reason: 'credentials in the URL are not allowed' };
  return { ok: true, url };
};

/**
 * Registers the webhook service's handlers. Layout (DESIGN.md): handlers/ translate gRPC and call one
 * use case of app/ each; app/ uses domain/ (pure) and store/ (account-scoped repositories).
 */
export async function setup(ctx: ServiceRuntime<Config>): Promise<void> {
  const subscriptions = subscriptionRepository(ctx.store);
  ctx.grpc.add(webhookV1.WebhookServiceService, webhookHandlers());
  ctx.grpc.add(
    webhookSubscriptionsV1.WebhookSubscriptionServiceService,
    subscriptionHandlers({ subscriptions, checkTarget: interimCheckTarget, now: ctx.now, newId: ctx.newId }),
  );
}
