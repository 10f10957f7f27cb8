import type { Router } from 'express';
import type { ServiceClients } from '../clients';
import { eventReportJson } from '../mapping/events';
import { boundariesToProto, bucketsOf, EMAIL_REPORT_METRICS, SUBSCRIBER_REPORT_METRICS, reportPointsJson } from '../mapping/reports';
import { mount, ok, operation, type Operation } from './operation';

// Reports (the API contract "Reports"): each answered by the service that owns the facts. The gateway checks
// the period and makes the buckets first, so a bad period never reaches a service.

export const reportOperations: Operation[] = [
  operation('post', '/reports/subscribers', 'reportSubscribers', async ({ clients, accountId, body, headers, call }) => {
    const buckets = bucketsOf(body);
    const res = await clients.subscriberReports.countSubscribers({ accountId, boundaries: boundariesToProto(buckets) }, call);
    return ok(reportPointsJson(buckets, res.buckets, SUBSCRIBER_REPORT_METRICS, headers['accept-language']));
  }),
  operation('post', '/reports/emails', 'reportEmails', async ({ clients, accountId, body, headers, call }) => {
    const buckets = bucketsOf(body);
    const res = await clients.emailReports.countEmails({ accountId, boundaries: boundariesToProto(buckets) }, call);
    return ok(reportPointsJson(buckets, res.buckets, EMAIL_REPORT_METRICS, headers['accept-language']));
  }),

  operation('post', '/reports/events', 'reportEvents', async ({ clients, accountId, body, headers, call }) => {
    const buckets = bucketsOf(body);
    const res = await clients.events.countEvents({ accountId, boundaries: boundariesToProto(buckets) }, call);
    return ok(eventReportJson(buckets, res.buckets, headers['accept-language']));
  }),
];

export const reportRoutes = (clients: ServiceClients): Router => mount(reportOperations, clients);
