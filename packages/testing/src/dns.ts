// A real authoritative DNS server for tests (dns2, UDP and TCP on one free loopback port) that answers
// TXT questions from a table the test edits: what a customer publishes in their zone. Every other
// name is NXDOMAIN. Services under test point DNS_SERVERS at `address`; `resolve` is node's resolver
// pointed at it too, for test code that checks what a receiver would see (e.g. DKIM verification).
import { Resolver } from 'node:dns/promises';
import DNS from 'dns2';
import { freePort } from './nats';

export interface TestDns {
  /** `127.0.0.1:<port>`, for DNS_SERVERS. */
  readonly address: string;
  /** Publishes the TXT records of a name (replacing its earlier ones). A value over 255 bytes is sent as several strings. */
  setTxt(name: string, values: string[]): void;
  /** Adds one TXT record to a name. */
  addTxt(name: string, value: string): void;
  removeTxt(name: string): void;
  /** How many questions the server has answered. */
  readonly queries: number;
  /** `dns.promises.resolve`-shaped lookup through this server. */
  resolve(name: string, rrtype: string): Promise<unknown>;
  close(): Promise<void>;
}

const { Packet } = DNS;

/** A TXT value as character-strings of at most 255 bytes (RFC 1035 3.3.14). */
const chunks = (value: string): string[] => {
  const out: string[] = [];
  for (let i = 0; i < value.length; i += 255) out.push(value.slice(i, i + 255));
  return out.length ? out : [''];
};

export async function startTestDns(): Promise<TestDns> {
  const records = new Map<string, string[]>();
  let queries = 0;
  const server = DNS.createServer({
    udp: true,
    tcp: true,
    handle: (request, send) => {
      queries++;
      const response = Packet.createResponseFromRequest(request);
      const [question] = request.questions;
      const name = question?.name.toLowerCase().replace(/\.$/, '') ?? '';
      const values = records.get(name);
      if (!values) response.header.rcode = Packet.RCODE.NXDOMAIN;
      else if (question.type === Packet.TYPE.TXT) {
        for (const value of values) response.answers.push({ name: question.name, type: Packet.TYPE.TXT, class: Packet.CLASS.IN, ttl: 1, data: chunks(value) } as never);
      }
      void send(response);
    },
  });
  // UDP and TCP on the same number: c-ares retries a truncated answer over TCP.
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    try {
      await server.listen({ udp: { port, address: '127.0.0.1' }, tcp: { port, address: '127.0.0.1' } });
      break;
    } catch (err) {
      await server.close().catch(() => undefined);
      if (attempt > 5) throw err;
    }
  }
  const port = server.addresses().udp!.port;
  const resolver = new Resolver({ timeout: 1_000, tries: 1 });
  resolver.setServers([`127.0.0.1:${port}`]);
  const key = (name: string) => name.toLowerCase().replace(/\.$/, '');
  return {
    address: `127.0.0.1:${port}`,
    setTxt: (name, values) => void records.set(key(name), [...values]),
    addTxt: (name, value) => void records.set(key(name), [...(records.get(key(name)) ?? []), value]),
    removeTxt: (name) => void records.delete(key(name)),
    get queries() {
      return queries;
    },
    resolve: (name, rrtype) => resolver.resolve(name, rrtype),
    close: () => server.close(),
  };
}
