// The public web surface served by the messaging service (the API contract "Public web surface", "Delivery facts,
// tracking, bounces, suppressions, unsubscribe"): what the gateway forwards to its HTTP listener. No
// API key, HTML or a pixel rather than JSON, and a per-address budget instead of an account's.
import { keyInUrlError } from '../common';

export const PUBLIC_WEB_TAG = 'Public web surface';

export const publicWebTags = [
  {
    name: PUBLIC_WEB_TAG,
    description: `Pages and links opened by readers, not integrators: they carry no API key and are forwarded as HTTP (not REST -> gRPC) to the service that owns them. \`/t/*\` (tracking) and \`/u/*\` (unsubscribe and preferences) go to the messaging service; \`/public/forms/*\`, \`/public/pages/*\` and \`/public/confirm/*\` to the form service. Every absolute link the system writes starts with the operator setting \`PUBLIC_BASE_URL\`.
- Tokens are opaque, signed (HMAC), bound to one account and one purpose: a forged, edited, truncated or foreign token answers \`404\` with a plain page, never a redirect elsewhere.
- Pages are server-rendered HTML that works without JavaScript, escape every customer-provided value, and send \`Content-Security-Policy\` (nothing loads but the page itself; no script; no framing), \`X-Content-Type-Options: nosniff\`, \`Referrer-Policy: no-referrer\` and \`Cache-Control: no-store\`. Pages holding a signup form (a landing page, the form again with its errors) declare \`<meta name="referrer" content="same-origin">\`: the browser then posts them with their own origin in \`Origin\` (accepted), never \`null\`, and tells other sites nothing.
- A browser's post (\`Accept\` preferring \`text/html\`) is always answered with a page, never JSON: the thank-you page (\`303\`), the form again with the errors marked (\`400\`), or a plain page saying why (refused origin \`403\`, unknown or inactive form \`404\`, rate limited \`429\`, unreadable body \`413\`/\`415\`, a service away \`503\`).
- \`/favicon.ico\` answers \`204\` (no icon; \`Cache-Control: public, max-age=86400\`) without an API key, on every host. No GET changes anything but the open and click counters: mail scanners follow links.
- Limited per client address (\`GATEWAY_PUBLIC_PER_MINUTE\`, 600 a minute by default, token bucket), not per account: over it a plain \`429\` page with \`Retry-After\`.
- A path that would leave its prefix once decoded (dot segments, encoded slashes or backslashes) answers \`404\` without being forwarded; an owner that does not answer gives a plain \`503\` page.`,
  },
];

const token = (purpose: string) => ({
  name: 'token',
  in: 'path',
  required: true,
  schema: { type: 'string', maxLength: 256, pattern: '^[A-Za-z0-9_-]+$' },
  description: `Signed ${purpose} token, as written into the mail.`,
});

const html = (description: string) => ({ description, content: { 'text/html': { schema: { type: 'string' } } } });
const notFound = html('Forged, edited, truncated or foreign token, or a message, link or reader that no longer exists: a plain page.');
const tooMany = {
  description: 'The client address used up its public-page budget: a plain page.',
  headers: { 'Retry-After': { $ref: '#/components/headers/RetryAfter' } },
  content: { 'text/html': { schema: { type: 'string' } } },
};
const unavailable = html('The owning service (or the subscriber service behind the preference page) does not answer: a plain page.');
// A key in the URL is refused by the gateway (JSON) before the page is asked for.
const common = { '400': keyInUrlError(), '404': notFound, '429': tooMany, '503': unavailable };

export const publicWebPaths = {
  '/t/o/{token}': {
    get: {
      tags: [PUBLIC_WEB_TAG],
      operationId: 'openPixel',
      summary: 'Open pixel',
      security: [],
      description: `A 1x1 transparent GIF with \`Cache-Control: no-store\`. Records an open of the message: \`openCount\` and \`firstOpenedAt\` for a reader, \`machineOpenCount\` only for a machine (within \`MACHINE_EVENT_WINDOW_MS\`, 2 s, of delivery, a \`HEAD\` probe, or a known mail-privacy proxy or link scanner by user agent or address), and an \`email.opened\` fact with \`machine\`.`,
      parameters: [token('open')],
      responses: { '200': { description: 'The pixel.', content: { 'image/gif': { schema: { type: 'string', contentMediaType: 'image/gif' } } } }, ...common },
    },
  },
  '/t/c/{token}': {
    get: {
      tags: [PUBLIC_WEB_TAG],
      operationId: 'clickRedirect',
      summary: 'Click redirect',
      security: [],
      description: `\`302\` to the original URL of that link of that message, and nowhere else (the token names a link of the stored message, never a URL). Records a click (\`clickCount\`/\`firstClickedAt\`, or \`machineClickCount\`) and an \`email.clicked\` fact with \`machine\` and \`url\`. A reader's click on a message with no reader open yet also records that open (images may be blocked; the click proves the mail was opened).`,
      parameters: [token('click')],
      responses: { '302': { description: 'To the original link.', headers: { Location: { $ref: '#/components/headers/Location' } } }, ...common },
    },
  },
  '/u/{token}': {
    get: {
      tags: [PUBLIC_WEB_TAG],
      operationId: 'preferencePage',
      summary: 'Preference page',
      security: [],
      description: 'The account\'s active topics with the reader\'s subscriptions as checkboxes, a save button and "Unsubscribe from all". Changes nothing.',
      parameters: [token('unsubscribe')],
      responses: { '200': html('The page.'), ...common },
    },
    post: {
      tags: [PUBLIC_WEB_TAG],
      operationId: 'unsubscribe',
      summary: 'One-click unsubscribe (RFC 8058) or the preference form',
      security: [],
      description: `- Body \`List-Unsubscribe=One-Click\` (what mail clients send for the \`List-Unsubscribe-Post\` header): opts the reader out of the mail's topic, or of every topic when the mail had none; \`200\` with an empty body.
- The preference page's form: \`topic\` (repeated, the topics to stay in) with \`action=save\`, or \`action=unsubscribe_all\`: unchecked topics are personal opt-outs with source \`unsubscribe_link\`, checked ones are (re)joined; \`200\` with a confirmation page.
- Anything else \`400\` (plain page). Bodies over 16 KiB: \`413\`.`,
      parameters: [token('unsubscribe')],
      requestBody: {
        required: true,
        content: {
          'application/x-www-form-urlencoded': {
            schema: {
              type: 'object',
              properties: {
                'List-Unsubscribe': { type: 'string', enum: ['One-Click'] },
                action: { type: 'string', enum: ['save', 'unsubscribe_all'] },
                topic: { type: 'array', items: { type: 'string', format: 'uuid' } },
              },
            },
          },
          'multipart/form-data': { schema: { type: 'object', properties: { 'List-Unsubscribe': { type: 'string', enum: ['One-Click'] } } } },
        },
      },
      responses: {
        '200': html('Done: an empty body for one-click, the confirmation page for the form.'),
        '413': html('The body is over 16 KiB.'),
        ...common,
        '400': {
          ...keyInUrlError(),
          description: 'Neither a one-click body nor the form (a plain page), or an API key in the URL (JSON).\n\nerrorId: `api_key_in_url`',
          content: { ...html('').content, ...keyInUrlError().content },
        },
      },
    },
  },
};
