// One transactional email's whole life, as an integrator and a reader meet it, through real processes
// only: nats-server, the subscriber, segment and messaging services, a real SMTP relay capturing what
// was sent, and the gateway (REST and the forwarded reader pages). Accepted -> sent over SMTP with a
// VERP return path -> DELIVERED -> a reader's click redirects and counts (with its implied open) ->
// the segment service's response operator sees the reader as "responded" -> the email report counts
// each step.
import { startCaptureRelay, startMesh, waitFor, type CaptureRelay, type ServiceMesh } from '@mailer/testing';
import { startGateway, startStack, type GatewayHandle, type Stack } from './support/harness';
import { expectStatus, newAccount, type Api } from './support/subscriber-stack';

jest.setTimeout(120_000);

let stack: Stack;
let relay: CaptureRelay;
let mesh: ServiceMesh;
let gw: GatewayHandle;
let acme: Api;

const BOUNCE_DOMAIN = 'bounces.journey.test';

/** The message as the API shows it, once `done` holds for it. */
const messageWhen = (what: string, messageId: string, done: (m: Record<string, any>) => boolean) => // eslint-disable-line @typescript-eslint/no-explicit-any
  waitFor(what, async () => {
    const m = expectStatus(await acme.get(`/email-messages/${messageId}`), 200);
    return done(m) && m;
  }, 20_000);

beforeAll(async () => {
  stack = await startStack(0);
  relay = await startCaptureRelay();
  mesh = await startMesh({ NATS_URL: stack.nats.url }, ['subscriber', 'segment']);
  gw = await startGateway({ NATS_URL: stack.nats.url, ...mesh.env, GATEWAY_UNAUTHENTICATED_PER_MINUTE: '100000' });
  // Messaging's links point at the gateway (its reader pages are forwarded there).
  await mesh.start(['messaging'], {
    messaging: {
      BOUNCE_DOMAIN,
      SMTP_URL: relay.url,
      PUBLIC_BASE_URL: gw.url,
      // A reader in this test clicks at once; the 2 s machine window has its own tests.
      MACHINE_EVENT_WINDOW_MS: '0',
    },
  });
  acme = await newAccount(gw, 'journey');
});

afterAll(async () => {
  await gw?.stop();
  await mesh?.stop();
  await relay?.close();
  await stack?.stop();
});

it('an accepted message is delivered over SMTP, its click redirects and counts, segments see the response, reports count it', async () => {
  const ann = expectStatus(await acme.post('/subscribers', { email: 'ann@example.org', firstName: 'Ann <Admin>' }), 201) as { id: string };
  expectStatus(await acme.post('/sender-profiles', { name: 'Shop', fromEmail: 'shop@example.com', fromName: 'The Shop', replyTo: 'help@example.com' }), 201);
  expectStatus(
    await acme.post('/email-templates', {
      name: 'order-shipped',
      subject: 'Order {{ orderId }} shipped',
      html: '<html><body><p>Hi {{ subscriber.firstName }}, {{ note }}</p><a href="https://shop.example/orders/{{ orderId }}?a=1&b=2">Track it</a></body></html>',
    }),
    201,
  );

  const accepted = expectStatus(
    await acme.post('/email-messages', { name: 'order-shipped', email: 'Ann@Example.org', substitutionData: { orderId: 'A-17', note: '<b>soon</b>' }, eventProperties: { orderId: 'A-17' } }),
    202,
  ) as { messageId: string; status: string };
  expect(accepted.status).toBe('QUEUED');

  // The relay received it: headers a reader's client shows, the VERP return path, escaped values.
  const [mail] = await relay.waitFor((all) => all.length === 1, 20_000);
  expect(mail.rcptTo).toEqual(['ann@example.org']);
  expect(mail.mailFrom).toMatch(new RegExp(`^b-[0-9a-f]{32}-[0-9a-f]{20}@${BOUNCE_DOMAIN.replace(/\./g, '\\.')}$`));
  expect(mail.headers.from).toBe('The Shop <shop@example.com>');
  expect(mail.headers['reply-to']).toBe('help@example.com');
  expect(mail.headers['return-path'] ?? mail.mailFrom).toContain(BOUNCE_DOMAIN);
  expect(mail.subject).toBe('Order A-17 shipped');
  expect(mail.headers['list-unsubscribe']).toBeUndefined(); // transactional mail
  expect(mail.html).toContain('Hi Ann &lt;Admin&gt;, &lt;b&gt;soon&lt;/b&gt;');
  expect(mail.html).not.toContain('https://shop.example/orders');
  expect(mail.text).toContain('Hi Ann <Admin>');

  const delivered = await messageWhen('DELIVERED', accepted.messageId, (m) => m.status === 'DELIVERED');
  expect(delivered).toMatchObject({ email: 'ann@example.org', subscriberId: ann.id, kind: 'TRANSACTIONAL', templateName: 'order-shipped', eventProperties: { orderId: 'A-17' } });
  expect(delivered.history.map((h: { status: string }) => h.status)).toEqual(['QUEUED', 'SENT', 'DELIVERED']);
  expect(delivered.attempts.at(-1)).toMatchObject({ outcome: 'SENT', smtpCode: 250 });

  // The reader clicks the rewritten link: through the gateway's forwarded /t/c, a 302 to the original.
  const clickUrl = /href="([^"]+\/t\/c\/[^"]+)"/.exec(mail.html!)![1].replace(/&amp;/g, '&');
  expect(clickUrl.startsWith(`${gw.url}/t/c/`)).toBe(true);
  const click = await fetch(clickUrl, { redirect: 'manual', headers: { 'user-agent': 'Mozilla/5.0 (Macintosh) AppleWebKit Safari' } });
  expect(click.status).toBe(302);
  expect(click.headers.get('location')).toBe('https://shop.example/orders/A-17?a=1&b=2');
  // An edited token never redirects anywhere.
  const edited = clickUrl.slice(0, -2) + (clickUrl.endsWith('AA') ? 'AB' : 'AA');
  expect((await fetch(edited, { redirect: 'manual' })).status).toBe(404);

  const clicked = await messageWhen('click counted', accepted.messageId, (m) => m.clickCount === 1);
  expect(clicked).toMatchObject({ clickCount: 1, openCount: 1, machineOpenCount: 0 });
  expect(clicked.firstClickedAt).toEqual(expect.any(String));

  // The segment service projected email.delivered / email.clicked: Ann responded within a day.
  const responded = { subjectType: 'FIELD', fieldRef: { type: 'BUILT_IN', builtInField: 'EMAIL' }, operator: 'RESPONDED_WITHIN_DAYS', operand: { kind: 'NUMBER', number: 1 } };
  await waitFor('segment sees the response', async () => expectStatus(await acme.post('/segments/preview', { expression: { conditionGroups: [{ conditions: [responded] }] } }), 200).matchingCount === 1, 20_000);

  // The email report counts each step on today's bucket.
  const today = new Date().toISOString().slice(0, 10);
  const report = expectStatus(await acme.post('/reports/emails', { fromDate: today, toDate: today, interval: 'DAY' }), 200) as { points: Array<Record<string, any>> };
  expect(report.points).toHaveLength(1);
  const [point] = report.points;
  for (const metric of ['sent', 'delivered', 'opened', 'clicked']) expect(point[metric]).toEqual({ value: 1, formattedValue: '1' });
  for (const metric of ['bounced', 'complained']) expect(point[metric]).toEqual({ value: 0, formattedValue: '0' });
});
