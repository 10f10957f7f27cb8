// The bounce listener's connection limits and the postmaster mailbox, against the running messaging
// process: one client address holds at most BOUNCE_SMTP_MAX_CONNECTIONS_PER_ADDRESS connections
// (another address is unaffected, a closed one frees its slot), an idle connection is closed after
// BOUNCE_SMTP_SOCKET_TIMEOUT_SECONDS, and mail to postmaster is accepted and dropped (RFC 5321
// section 4.5.1) while other addresses of the domain are still refused.
import net from 'node:net';
import { startNatsServer, startService, type NatsServerHandle, type RunningService } from '@mailer/testing';
import { clientKey } from '../src/readers/inbound/bounce-listener';
import { sendMail } from './support/smtp-client';

jest.setTimeout(60_000);

const BOUNCE_DOMAIN = 'bounces.limits.example';
const PER_ADDRESS = 3;
let nats: NatsServerHandle;
let messaging: RunningService;
let port: number;
const sockets: net.Socket[] = [];

beforeAll(async () => {
  nats = await startNatsServer();
  messaging = await startService('messaging', {
    NATS_URL: nats.url,
    BOUNCE_DOMAIN,
    BOUNCE_SMTP_HOST: '127.0.0.1',
    BOUNCE_SMTP_MAX_CONNECTIONS_PER_ADDRESS: String(PER_ADDRESS),
    BOUNCE_SMTP_SOCKET_TIMEOUT_SECONDS: '2',
  });
  port = Number(/"port":(\d+)[^\n]*bounce listener/.exec(messaging.output())![1]);
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await messaging?.stop();
  await nats?.stop();
});

/** Opens a connection from `localAddress` and resolves with the server's first reply line; `closed` resolves when the server hangs up. */
async function connect(localAddress = '127.0.0.1'): Promise<{ socket: net.Socket; greeting: string; closed: Promise<number> }> {
  const socket = net.connect({ port, host: '127.0.0.1', localAddress });
  sockets.push(socket);
  const opened = Date.now();
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now() - opened)));
  socket.on('error', () => undefined);
  const greeting = await new Promise<string>((resolve, reject) => {
    let text = '';
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1');
      if (text.includes('\r\n')) resolve(text.split('\r\n')[0]);
    });
    socket.once('close', () => reject(new Error(`closed before a greeting: ${text}`)));
  });
  return { socket, greeting, closed };
}

it(`one address holds at most ${PER_ADDRESS} connections (421 beyond); another address is unaffected; a closed one frees its slot`, async () => {
  const held = [];
  for (let i = 0; i < PER_ADDRESS; i++) held.push(await connect());
  expect(held.map((c) => c.greeting.slice(0, 3))).toEqual(Array(PER_ADDRESS).fill('220'));
  const refused = await connect();
  expect(refused.greeting).toMatch(/^421 .*Too many connections from your address/);
  await refused.closed;
  expect((await connect('127.0.0.2')).greeting).toMatch(/^220 /);

  held[0].socket.destroy();
  await held[0].closed;
  // The slot is freed when the server sees the close: poll, with a deadline.
  const deadline = Date.now() + 5_000;
  let again = await connect();
  while (!again.greeting.startsWith('220') && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    again = await connect();
  }
  expect(again.greeting).toMatch(/^220 /);
  for (const c of [...held, again]) c.socket.destroy();
});

it('closes an idle connection after the socket timeout', async () => {
  const idle = await connect('127.0.0.3');
  expect(idle.greeting).toMatch(/^220 /);
  let timer: NodeJS.Timeout | undefined;
  const elapsed = await Promise.race([idle.closed, new Promise<number>((r) => (timer = setTimeout(() => r(-1), 15_000)))]);
  clearTimeout(timer);
  expect(elapsed).not.toBe(-1);
  expect(elapsed).toBeGreaterThanOrEqual(1_900);
});

it('accepts mail to postmaster (with or without the domain, any case) and drops it; other local parts and domains stay refused', async () => {
  const t = await sendMail(port, [`postmaster@${BOUNCE_DOMAIN}`, 'Postmaster', `PostMaster@${BOUNCE_DOMAIN.toUpperCase()}`, `abuse@${BOUNCE_DOMAIN}`, 'postmaster@elsewhere.example'], 'Subject: hello\r\n\r\nfor the postmaster\r\n');
  expect(t).toMatchObject({ rcptTo: [250, 250, 250, 550, 550], data: 354, end: 250 });
});

it('groups IPv6 clients by /64 and IPv4 clients by address', () => {
  expect(clientKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
  expect(clientKey('2001:db8:1:2:bbbb:cccc:dddd:eeee')).toBe('2001:db8:1:2::/64');
  expect(clientKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
  expect(clientKey('2001:0db8:0000:0003::1')).toBe('2001:db8:0:3::/64');
  expect(clientKey('::1')).toBe('0:0:0:0::/64');
  expect(clientKey('192.0.2.7')).toBe('192.0.2.7');
});
