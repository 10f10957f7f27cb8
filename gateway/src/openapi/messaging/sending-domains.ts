import { instant, ok, ref, schemaRef } from '../common';
import { body, created, idempotencyKey, noContent, object, posted, responses } from '../operations';

/** Sending domains (messaging service). Rules: services/messaging/src/templates/domain/sending-domain.ts. */

const DOMAIN_MAX_LENGTH = 253;

const domainPath = [ref('parameters', 'SendingDomainName')];
const NOT_FOUND = 'A domain the account has not added (another account\'s included) is `404 sending_domain_not_found`.';
export const SENDING_DOMAIN_RULES = `An account proves that it controls a domain before it may send from it or serve landing pages on it. Adding a domain makes, for this account and this domain only, a verification token and a DKIM key pair (RSA 2048, selector \`mailer<10 hex>\`; the private key is stored encrypted and never shown). \`records\` lists what to publish in the domain's DNS zone: the OWNERSHIP record \`_mailer.<domain>\` TXT \`mailer-verification=<token>\` and the DKIM record \`<selector>._domainkey.<domain>\` TXT \`v=DKIM1; k=rsa; p=<public key>\` (a DNS provider may split a long TXT value into several strings; that is fine). Two accounts may each add and verify the same domain, each with its own token and key: mail is always signed with the sending account's own key, never another account's.

A domain is matched exactly: verifying \`example.com\` does not cover \`mail.example.com\` (add and verify each domain you send from or serve pages on). Domains are answered lower-case in their ASCII form (an internationalised name is answered as punycode, \`xn--...\`).

When the installation requires verification (its operators set \`MAIL_DOMAIN_VERIFICATION=required\`, the recommended production setting), a sender profile whose \`fromEmail\` domain is not VERIFIED in the account is refused on create, update and at every send (\`409 sender_domain_not_verified\`), and so is a landing page \`domain\` on form create, update and publish (\`409 page_domain_not_verified\`; the installation's own host needs none). With \`off\` (development) any domain is accepted, and mail from a domain the account has not verified is signed with the operator's own keys where they have that domain; mail from a domain the account verified is signed with the account's key either way.`;

export const sendingDomainPaths = {
  '/sending-domains': {
    get: {
      tags: ['Sending domains'],
      operationId: 'listSendingDomains',
      summary: 'List sending domains',
      description: `Every sending domain of the account, by name.\n\n${SENDING_DOMAIN_RULES}`,
      responses: responses('get', { '200': ok('The sending domains.', schemaRef('SendingDomainList')) }, {}),
    },
    post: {
      tags: ['Sending domains'],
      operationId: 'createSendingDomain',
      summary: 'Add a sending domain',
      description: `Adds the domain as \`PENDING\` with the records to publish; then publish them and call \`POST /sending-domains/{domain}/verify\`. A name that is not a host name of at least two labels (an address, a single word, a label over 63 characters, a name over ${DOMAIN_MAX_LENGTH} characters) is \`400 validation_failed\`; a domain the account already has is \`409 sending_domain_exists\` (another account having it does not matter). When the operator has not configured the key that protects the DKIM private keys, \`503 service_unavailable\`.\n\n${SENDING_DOMAIN_RULES}`,
      parameters: [idempotencyKey],
      requestBody: body('SendingDomainRequest'),
      responses: responses('post', { '201': created('Added, PENDING.', 'SendingDomain') }, { 409: ['sending_domain_exists'] }),
    },
  },
  '/sending-domains/{domain}': {
    get: {
      tags: ['Sending domains'],
      operationId: 'getSendingDomain',
      summary: 'Get a sending domain',
      description: `The domain with its records, status and the problems its last verification found. ${NOT_FOUND}`,
      parameters: domainPath,
      responses: responses('get', { '200': ok('The sending domain.', schemaRef('SendingDomain')) }, { 404: ['sending_domain_not_found'] }),
    },
    delete: {
      tags: ['Sending domains'],
      operationId: 'deleteSendingDomain',
      summary: 'Delete a sending domain',
      description: `Deletes the domain, its token and its DKIM key (mail signed with it before stays verifiable while its DNS record is published). Refused with \`409 sending_domain_in_use\` while a sender profile sends from the domain or a form serves its landing page on it (\`details\` lists them as \`senderProfiles.<senderProfileId>\` and \`forms.<formId>\`; when the form service does not answer, \`503 service_unavailable\`: the delete cannot be proven safe). ${NOT_FOUND}`,
      parameters: domainPath,
      responses: responses('delete', { '204': noContent('Deleted.') }, { 404: ['sending_domain_not_found'], 409: ['sending_domain_in_use'] }),
    },
  },
  '/sending-domains/{domain}/verify': {
    post: {
      tags: ['Sending domains'],
      operationId: 'verifySendingDomain',
      summary: 'Verify a sending domain',
      description: `Looks the records up in DNS now (bounded: a few seconds at most). \`VERIFIED\` when the OWNERSHIP record is among the TXT records of its name, else \`PENDING\` with \`problems\` saying what is missing; a domain that was VERIFIED becomes PENDING again when the answer no longer holds the record (its sender profiles and pages are then refused as above until it is verified again). A lookup that fails (timeout, server failure) proves nothing: the status stays as it was and \`problems\` says so. The DKIM record never decides the status, but when it is missing or holds another key \`problems\` says so: mail is signed with a key receivers cannot find until it is published. Verify again whenever the records change; nothing is checked in the background. ${NOT_FOUND}`,
      parameters: [...domainPath, idempotencyKey],
      responses: responses('post', { '200': posted('The domain after this verification.', 'SendingDomain') }, { 404: ['sending_domain_not_found'] }, { body: false }),
    },
  },
};

export const sendingDomainParameters = {
  SendingDomainName: {
    name: 'domain',
    in: 'path',
    required: true,
    schema: { type: 'string', minLength: 1, maxLength: DOMAIN_MAX_LENGTH * 4, examples: ['example.com'] },
    description: 'The domain name, any case (an internationalised name in Unicode or punycode).',
  },
};

const dnsRecord = object(['purpose', 'type', 'name', 'value'], {
  purpose: { type: 'string', enum: ['OWNERSHIP', 'DKIM'], description: 'OWNERSHIP proves control of the domain; DKIM publishes the public key receivers check signatures with.' },
  type: { type: 'string', enum: ['TXT'] },
  name: { type: 'string', description: 'The full record name.', examples: ['_mailer.example.com'] },
  value: { type: 'string', description: 'The TXT value, exactly.' },
});

const EXAMPLE = {
  domain: 'example.com',
  status: 'PENDING',
  records: [
    { purpose: 'OWNERSHIP', type: 'TXT', name: '_mailer.example.com', value: 'mailer-verification=6f1c0e9a4b2d48c7a1e35b9d0c7f2a64' },
    { purpose: 'DKIM', type: 'TXT', name: 'mailer4a7f19c2e0._domainkey.example.com', value: 'v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA...' },
  ],
  problems: ['no TXT record found at _mailer.example.com: publish _mailer.example.com TXT "mailer-verification=6f1c0e9a4b2d48c7a1e35b9d0c7f2a64"'],
  verifiedAt: null,
  createdAt: '2026-03-01T10:00:00.000Z',
};

export const sendingDomainSchemas = {
  SendingDomainRequest: object(['domain'], {
    domain: { type: 'string', minLength: 1, maxLength: DOMAIN_MAX_LENGTH * 4, description: 'A host name such as `example.com` or `mail.example.com` (trimmed, any case, a trailing dot ignored).', examples: ['example.com'] },
  }),
  SendingDomain: object(
    ['domain', 'status', 'records', 'problems', 'verifiedAt', 'createdAt'],
    {
      domain: { type: 'string', description: 'Lower case, ASCII (punycode) form.' },
      status: { type: 'string', enum: ['PENDING', 'VERIFIED'] },
      records: { type: 'array', items: dnsRecord, description: 'The OWNERSHIP record, then the DKIM record.' },
      problems: { type: 'array', items: { type: 'string' }, description: 'What the last verification found missing or wrong (empty before the first one).' },
      verifiedAt: { type: ['string', 'null'], format: 'date-time', description: 'Since when the domain has been VERIFIED without interruption; null while PENDING.' },
      createdAt: instant,
    },
    { examples: [EXAMPLE] },
  ),
  SendingDomainList: object(['items'], { items: { type: 'array', items: schemaRef('SendingDomain') } }),
};
