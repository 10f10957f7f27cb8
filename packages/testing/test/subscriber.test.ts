// The subscriber stack helper other services' tests start (@mailer/testing/subscriber): a real
// nats-server and subscriber service, a client that writes, the DOMAIN reader, and a stop() that
// leaves nothing running.
import net from 'node:net';
import { add, errorOf, eventsOf, newAccount, startSubscriberStack, type SubscriberStack } from '../src/subscriber';

const refused = (address: string) =>
  new Promise<boolean>((resolve) => {
    const [host, port] = address.split(':');
    const sock = net.connect({ host, port: Number(port) });
    sock.once('connect', () => (sock.destroy(), resolve(false)));
    sock.once('error', () => resolve(true));
  });

let stack: SubscriberStack | undefined;
afterAll(async () => {
  await stack?.stop();
});

it('starts nats-server and the subscriber service, writes reach DOMAIN, errors are captured, stop() ends both', async () => {
  stack = await startSubscriberStack();
  const accountId = newAccount();
  const created = await add(stack.client, accountId, 'ada@example.org');
  expect(created.email).toBe('ada@example.org');
  const events = await eventsOf(stack.nc, accountId, (es) => es.some((e) => e.type === 'subscriber.created'));
  expect(events.every((e) => e.accountId === accountId)).toBe(true);
  expect(await errorOf(add(stack.client, accountId, 'not an email'))).toMatchObject({ errorId: expect.any(String), code: 3 });

  const { svc, nats } = stack;
  await stack.stop();
  stack = undefined;
  expect(await refused(svc.address)).toBe(true);
  expect(await refused(nats.url.replace('nats://', ''))).toBe(true);
});
