import { credentials, makeGenericClientConstructor, type ServiceDefinition } from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';
import { createClient, GATEWAY_DEADLINES, peerClient, type PeerSpec, type PromiseClient } from '@mailer/kit';
import { automationsV1, broadcastsV1, emailMessagesV1, rssNewslettersV1, emailReportsV1, emailTemplatesV1, eventsV1, formV1, segmentV1, senderProfilesV1, sendingDomainsV1, subscriberReportsV1, subscriberV1, submissionsV1, suppressionsV1, webhookDeliveriesV1, webhookSubscriptionsV1 } from '@mailer/proto';
import type { GatewayConfig } from '../config';

/**
 * Deadline of a call to a service: a slow service answers 503, never hangs the gateway. Operations
 * whose service-side work has longer limits (feed reads, segment reads, bulk writes) name their own
 * deadline from GATEWAY_DEADLINES (routes/operation.ts), which is derived from those limits.
 */
const SERVICE_DEADLINE_MS = GATEWAY_DEADLINES.standard;
const HEALTH_DEADLINE_MS = 1_000;

// grpc.health.v1 (the definition ships with grpc-health-check, which the services' servers use too).
const HealthClient = makeGenericClientConstructor(healthService as unknown as ServiceDefinition, 'grpc.health.v1.Health');
type HealthCheck = (
  req: { service: string },
  opts: { deadline: number },
  cb: (err: Error | null, res?: { status?: string }) => void,
) => void;

/** grpc.health.v1 Check of one service: true only for SERVING within the deadline. */
function healthChecker(address: string, serviceName: string) {
  const raw = new HealthClient(address, credentials.createInsecure());
  const check = (raw as unknown as { Check: HealthCheck }).Check.bind(raw);
  return {
    serving: () =>
      new Promise<boolean>((resolve) =>
        check({ service: serviceName }, { deadline: Date.now() + HEALTH_DEADLINE_MS }, (err, res) => resolve(!err && res?.status === 'SERVING')),
      ),
    close: () => raw.close(),
  };
}

export interface ServiceClients {
  subscriber: PromiseClient<subscriberV1.SubscriberServiceClient>;
  subscriberReports: PromiseClient<subscriberReportsV1.SubscriberReportServiceClient>;
  segment: PromiseClient<segmentV1.SegmentServiceClient>;
  suppressions: PromiseClient<suppressionsV1.SuppressionServiceClient>;
  emailReports: PromiseClient<emailReportsV1.EmailReportServiceClient>;
  senderProfiles: PromiseClient<senderProfilesV1.SenderProfileServiceClient>;
  sendingDomains: PromiseClient<sendingDomainsV1.SendingDomainServiceClient>;
  emailTemplates: PromiseClient<emailTemplatesV1.EmailTemplateServiceClient>;
  emailMessages: PromiseClient<emailMessagesV1.EmailMessageServiceClient>;
  forms: PromiseClient<formV1.FormServiceClient>;
  submissions: PromiseClient<submissionsV1.SubmissionServiceClient>;
  events: PromiseClient<eventsV1.EventServiceClient>;
  automations: PromiseClient<automationsV1.AutomationServiceClient>;
  webhookSubscriptions: PromiseClient<webhookSubscriptionsV1.WebhookSubscriptionServiceClient>;
  webhookDeliveries: PromiseClient<webhookDeliveriesV1.WebhookDeliveryServiceClient>;
  rss: PromiseClient<rssNewslettersV1.RssNewsletterServiceClient>;
  broadcasts: PromiseClient<broadcastsV1.BroadcastServiceClient>;
  /** True when the subscriber service reports SERVING within a short deadline. */
  subscriberServing(): Promise<boolean>;
  close(): void;
}

/**
 * A service that does not answer (down, unreachable, past the deadline) is `503 service_unavailable`
 * naming the capability; the transport's own words (hosts, ports) go to the request's error log line
 * only (middleware/errors.ts logs the error with its `failure`). A service's DomainErrors pass through.
 */
export const servicePeer = (service: string): PeerSpec => ({
  service,
  errorId: 'service_unavailable',
  message: `The ${service} service is unavailable; retry later.`,
});

/**
 * One long-lived promise client per service, created once at start (a channel multiplexes every
 * call). 
 */
export function createServiceClients(config: GatewayConfig): ServiceClients {
  const subscriber = peerClient(createClient(subscriberV1.SubscriberServiceClient, config.SUBSCRIBER_GRPC_ADDR, SERVICE_DEADLINE_MS), servicePeer('subscriber'));
  const subscriberReports = peerClient(createClient(subscriberReportsV1.SubscriberReportServiceClient, config.SUBSCRIBER_GRPC_ADDR, SERVICE_DEADLINE_MS), servicePeer('subscriber'));
  const segment = peerClient(createClient(segmentV1.SegmentServiceClient, config.SEGMENT_GRPC_ADDR, SERVICE_DEADLINE_MS), servicePeer('segment'));
  const suppressions = peerClient(createClient(suppressionsV1.SuppressionServiceClient, config.MESSAGING_GRPC_ADDR, SERVICE_DEADLINE_MS), servicePeer('messaging'));
  const emailReports = peerClient(createClient(emailReportsV1.EmailReportServiceClient, config.MESSAGING_GRPC_ADDR, SERVICE_DEADLINE_MS), servicePeer('messaging'));
  const senderProfiles = peerClient(createClient(senderProfilesV1.SenderProfileServiceClient, config.MESSAGING_GRPC_ADDR, SERVICE_DEADLINE_MS), servicePeer('messaging'));
  const sendingDomains = peerClient(createClient(sendingDomainsV1.SendingDomainServiceClient, config.MESSAGING_GRPC_ADDR, SERVICE_DEADLINE_MS), servicePeer('messaging'));
  const emailTemplates = peerClient(createClient(emailTemplatesV1.EmailTemplateServiceClient, config.MESSAGING_GRPC_ADDR, SERVICE_DEADLINE_MS), servicePeer('messaging'));
  const emailMessages = peerClient(createClient(emailMessagesV1.EmailMessageServiceClient, config.MESSAGING_GRPC_ADDR, SERVICE_DEADLINE_MS), servicePeer('messaging'));
  const forms = peerClient(createClient(formV1.FormServiceClient, config.FORM_GRPC_ADDR, SERVICE_DEADLINE_MS), servicePeer('form'));
  const submissions = peerClient(createClient(submissionsV1.SubmissionServiceClient, config.FORM_GRPC_ADDR, SERVICE_DEADLINE_MS), servicePeer('form'));
  const events = peerClient(createClient(eventsV1.EventServiceClient, config.MESSAGING_GRPC_ADDR, SERVICE_DEADLINE_MS), servicePeer('messaging'));
  const automations = peerClient(createClient(automationsV1.AutomationServiceClient, config.MESSAGING_GRPC_ADDR, SERVICE_DEADLINE_MS), servicePeer('messaging'));
  const webhookSubscriptions = peerClient(createClient(webhookSubscriptionsV1.WebhookSubscriptionServiceClient, config.WEBHOOK_GRPC_ADDR, SERVICE_DEADLINE_MS), servicePeer('webhook'));
  const webhookDeliveries = peerClient(createClient(webhookDeliveriesV1.WebhookDeliveryServiceClient, config.WEBHOOK_GRPC_ADDR, SERVICE_DEADLINE_MS), servicePeer('webhook'));
  const rss = peerClient(createClient(rssNewslettersV1.RssNewsletterServiceClient, config.RSS_GRPC_ADDR, SERVICE_DEADLINE_MS), servicePeer('rss'));
  const broadcasts = peerClient(createClient(broadcastsV1.BroadcastServiceClient, config.MESSAGING_GRPC_ADDR, SERVICE_DEADLINE_MS), servicePeer('messaging'));
  const subscriberHealth = healthChecker(config.SUBSCRIBER_GRPC_ADDR, 'mailer.subscriber.v1.SubscriberService');
  return {
    subscriber,
    subscriberReports,
    segment,
    suppressions,
    emailReports,
    senderProfiles,
    sendingDomains,
    emailTemplates,
    emailMessages,
    forms,
    submissions,
    events,
    automations,
    webhookSubscriptions,
    webhookDeliveries,
    rss,
    broadcasts,
    subscriberServing: subscriberHealth.serving,
    close() {
      subscriber.close();
      subscriberReports.close();
      segment.close();
      suppressions.close();
      emailReports.close();
      senderProfiles.close();
      sendingDomains.close();
      emailTemplates.close();
      emailMessages.close();
      forms.close();
      submissions.close();
      events.close();
      automations.close();
      webhookSubscriptions.close();
      webhookDeliveries.close();
      rss.close();
      broadcasts.close();
      subscriberHealth.close();
    },
  };
}
