// TXT lookups for domain verification through node's DNS resolver (c-ares), asking DNS_SERVERS when
// given, else the system's resolvers. A lookup is bounded (timeout x tries, inside the gateway's 5 s)
// so a verify call answers even when the customer's name servers do not.
import { Resolver } from 'node:dns/promises';
import type { TxtAnswer } from '../domain/sending-domain';

export interface TxtLookup {
  txt(name: string): Promise<TxtAnswer>;
}

/** Answers that mean "the name or its TXT records do not exist", as opposed to a failed lookup. */
const ABSENT = new Set(['ENOTFOUND', 'ENODATA']);

export function dnsTxtLookup(servers: readonly string[], opts: { timeoutMs?: number; tries?: number } = {}): TxtLookup {
  const resolver = new Resolver({ timeout: opts.timeoutMs ?? 1_500, tries: opts.tries ?? 2 });
  if (servers.length) resolver.setServers([...servers]);
  return {
    async txt(name) {
      try {
        // A record may be split into several strings (each at most 255 bytes): they form one value.
        return { kind: 'records', records: (await resolver.resolveTxt(name)).map((chunks) => chunks.join('')) };
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code ?? 'error';
        return ABSENT.has(code) ? { kind: 'none' } : { kind: 'failed', reason: code };
      }
    },
  };
}
