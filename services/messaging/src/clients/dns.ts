// TXT lookups for domain verification through node's DNS resolver (c-ares), asking DNS_SERVERS when
// given, else the system's resolvers. A lookup has one overall deadline (c-ares alone may wait
// timeout x tries for every server in turn) so a verify call answers inside the gateway's 5 s even
// when the customer's name servers do not.
import { Resolver } from 'node:dns/promises';
import type { TxtAnswer } from '../templates/domain/sending-domain';

export interface TxtLookup {
  txt(name: string): Promise<TxtAnswer>;
}

/** Answers that mean "the name or its TXT records do not exist", as opposed to a failed lookup. */
const ABSENT = new Set(['ENOTFOUND', 'ENODATA']);

export function dnsTxtLookup(servers: readonly string[], opts: { deadlineMs?: number } = {}): TxtLookup {
  const deadlineMs = opts.deadlineMs ?? 3_000;
  return {
    async txt(name) {
      // One resolver per lookup: cancelling it at the deadline cancels this lookup only.
      const resolver = new Resolver({ timeout: Math.min(1_000, deadlineMs), tries: 2 });
      if (servers.length) resolver.setServers([...servers]);
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<TxtAnswer>((resolve) => {
        timer = setTimeout(() => {
          resolver.cancel();
          resolve({ kind: 'failed', reason: 'ETIMEOUT' });
        }, deadlineMs);
      });
      const lookup = resolver.resolveTxt(name).then(
        // A record may be split into several strings (each at most 255 bytes): they form one value.
        (found): TxtAnswer => ({ kind: 'records', records: found.map((chunks) => chunks.join('')) }),
        (err: NodeJS.ErrnoException): TxtAnswer => (ABSENT.has(err.code ?? '') ? { kind: 'none' } : { kind: 'failed', reason: err.code ?? 'error' }),
      );
      try {
        return await Promise.race([lookup, deadline]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
