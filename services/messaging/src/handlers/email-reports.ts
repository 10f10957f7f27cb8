// mailer.messaging.v1.EmailReportService: POST /reports/emails through the gateway.
import { accountOf, invalid, type AsyncHandlers } from '@mailer/kit';
import { emailReportsV1 } from '@mailer/proto';
import { countEmails, type EmailReportDeps } from '../app/email-reports';

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$/;

function instants(values: string[]): Date[] {
  return values.map((v, i) => {
    const d = new Date(v);
    if (!ISO_INSTANT.test(v) || Number.isNaN(+d)) throw invalid('validation_failed', `boundary ${i} is not a UTC ISO 8601 instant`, [{ path: `boundaries[${i}]`, problem: 'must be a UTC ISO 8601 instant' }]);
    return d;
  });
}

export function emailReportHandlers(deps: EmailReportDeps): AsyncHandlers<emailReportsV1.EmailReportServiceServer> {
  return {
    async countEmails(req) {
      const buckets = await countEmails(deps, { accountId: accountOf(req), boundaries: instants(req.boundaries ?? []) });
      return {
        buckets: buckets.map((c) => ({
          sent: String(c.sent),
          delivered: String(c.delivered),
          opened: String(c.opened),
          clicked: String(c.clicked),
          bounced: String(c.bounced),
          complained: String(c.complained),
        })),
      };
    },
  };
}
