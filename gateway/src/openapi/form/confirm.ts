// The double opt-in confirm page served by the form service (the API contract "Forms", "Public web surface"):
// what the gateway forwards to its HTTP listener under /public/confirm/*.
import { keyInUrlError } from '../common';
import { PUBLIC_WEB_TAG } from '../messaging/public-web';

const token = {
  name: 'token',
  in: 'path',
  required: true,
  schema: { type: 'string', maxLength: 256, pattern: '^[A-Za-z0-9_-]+$' },
  description: 'Signed confirm token, as written into the confirmation mail (names the account and the submission; expires after `FORM_CONFIRM_TOKEN_DAYS`, 7 by default).',
};
const html = (description: string) => ({ description, content: { 'text/html': { schema: { type: 'string' } } } });
const common = {
  '400': keyInUrlError(), // by the gateway, before the page is asked for
  '404': html('Forged, edited, truncated or foreign token, or a submission that does not exist: a plain page.'),
  '410': html('The link expired (a plain page saying so; nothing changes), or the subscriber was deleted since.'),
  '429': { description: 'The client address used up its public-page budget: a plain page.', headers: { 'Retry-After': { $ref: '#/components/headers/RetryAfter' } }, content: { 'text/html': { schema: { type: 'string' } } } },
  '503': html('The subscriber service does not answer, or (POST) the submission is still being processed: a plain page with `Retry-After`.'),
};

export const confirmPaths = {
  '/public/confirm/{token}': {
    get: {
      tags: [PUBLIC_WEB_TAG],
      operationId: 'confirmPage',
      summary: 'Double opt-in confirmation page',
      security: [],
      description: 'A page asking the reader to confirm the subscription, naming whom to (the account\'s display name, set by the operator, and the form\'s name; both escaped), with a "Confirm" button that POSTs to the same address, and until when the link works. Changes nothing: mail scanners prefetch links. When the account\'s name cannot be read (the message bus is away) the page names the form only.',
      parameters: [token],
      responses: { '200': html('The page with the button.'), ...common },
    },
    post: {
      tags: [PUBLIC_WEB_TAG],
      operationId: 'confirmSubscription',
      summary: 'Confirm the subscription (the page\'s button)',
      security: [],
      description: `The submission's subscriber \`UNCONFIRMED\` -> \`ACTIVE\` (\`confirmedAt\`, fact \`subscriber.confirmed\`), and a success page; an \`ACTIVE\` subscriber (confirming twice) gets the same page. A subscriber that is \`UNSUBSCRIBED\`, \`BOUNCED\`, \`COMPLAINED\` or \`BLOCKED\` is not changed: \`409\` with a page saying so. The body is ignored.`,
      parameters: [token],
      responses: { '200': html('Confirmed (also the second time); the page names the account as the GET page does.'), '409': html('The subscriber was unsubscribed, bounced, complained or blocked since: nothing changed.'), ...common },
    },
  },
};
