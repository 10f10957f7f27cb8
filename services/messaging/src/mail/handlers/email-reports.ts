// mailer.messaging.v1.EmailReportService: POST /reports/emails through the gateway.
import { accountOf, type AsyncHandlers } from '@mailer/kit';
import { emailReportsV1 } from '@mailer/proto';
import { countEmails, type EmailReportDeps } from '../app/email-reports';
import { boundaryInstants } from './report-boundaries';

export function emailReportHandlers(deps: EmailReportDeps): AsyncHandlers<emailReportsV1.EmailReportServiceServer> {
  return {
    async countEmails(req) {
      const buckets = await countEmails(deps, { accountId: accountOf(req), boundaries: boundaryInstants(req.boundaries ?? []) });
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
