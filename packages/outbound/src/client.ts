import { isIP, type LookupFunction } from 'node:net';
import type { LookupAddress } from 'node:dns';
import { performance } from 'node:perf_hooks';
import { Agent, buildConnector, request as undiciRequest } from 'undici';
import { OutboundError, type OutboundErrorCode } from './errors';
import { addressPolicy, type OutboundSettings } from './policy';
import { checkUrl, systemLookup, type Lookup } from './url';

export interface OutboundOptions {
  lookup?: Lookup;
  /** Trusted CA certificates (PEM) in place of Node's bundled ones: for tests (a self-signed receiver), not production. */
  ca?: string | Buffer | Array<string | Buffer>;
  /** Keep-alive connections per origin (default 10). */
  connectionsPerOrigin?: number;
}

export interface OutboundRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer | Uint8Array;
  /** Whole call: connect, headers and body (default 15 000). */
  timeoutMs?: number;
  /** Bytes of response body kept (default 64 KiB). */
  maxResponseBytes?: number;
  /** 'truncate' (default): keep the first maxResponseBytes, `truncated: true`; 'fail': response_too_large. */
  onTooLarge?: 'truncate' | 'fail';
}

export interface OutboundResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  truncated: boolean;
  durationMs: number;
}

export interface Outbound {
  /** One request; redirects are never followed (a 3xx comes back as the status). Throws OutboundError. */
  request(url: string | URL, req?: OutboundRequest): Promise<OutboundResponse>;
  close(): Promise<void>;
}

const NOT_ALLOWED = 'the target resolves to a loopback, private, link-local or other non-public address';

const TLS_CODES = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH|ERR_OSSL)/;

/** Maps whatever undici / node threw to an OutboundError with a message fit for the customer. */
const toOutboundError = (err: unknown, timedOut: boolean): OutboundError => {
  if (err instanceof OutboundError) return err;
  if (timedOut) return new OutboundError('timeout', 'the target did not answer in time');
  const e = err as { code?: string; cause?: unknown };
  const code = e?.code ?? (e?.cause as { code?: string } | undefined)?.code ?? '';
  if (e?.cause instanceof OutboundError) return e.cause;
  const fail = (c: OutboundErrorCode, m: string) => new OutboundError(c, m);
  if (/TIMEOUT/.test(code)) return fail('timeout', 'the target did not answer in time');
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ENODATA') return fail('dns_failed', 'the target host name could not be resolved');
  if (code === 'ECONNREFUSED') return fail('connection_failed', 'the target refused the connection');
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE') return fail('connection_failed', 'the connection was closed before a complete answer');
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return fail('connection_failed', 'the target is unreachable');
  if (TLS_CODES.test(code)) return fail('tls_failed', 'the TLS handshake with the target failed (certificate or protocol)');
  return fail('connection_failed', 'the request to the target failed');
};

/**
 * The outbound client: one keep-alive undici Agent whose connections (1) resolve names through a lookup
 * that drops every address the policy refuses, so the address checked is the address net.connect
 * uses, and (2) verify the socket's remote address once connected. Literal addresses are checked before
 * any packet is sent.
 */
export const createOutbound = (settings: OutboundSettings, opts: OutboundOptions = {}): Outbound => {
  const policy = addressPolicy(settings);
  const resolve: Lookup = opts.lookup ?? systemLookup;

  const guardedLookup: LookupFunction = (hostname, options, callback) => {
    resolve(hostname, { all: true, family: options.family as number | undefined }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = (Array.isArray(addresses) ? addresses : []).filter((a) => policy.allows(a.address));
      if (list.length === 0) return callback(new OutboundError('address_not_allowed', NOT_ALLOWED) as NodeJS.ErrnoException, '', 0);
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      callback(null, list[0].address, list[0].family);
    });
  };

  const base = buildConnector({ lookup: guardedLookup, ca: opts.ca });
  const connector: buildConnector.connector = (options, callback) => {
    const host = options.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) && !policy.allows(host)) return callback(new OutboundError('address_not_allowed', NOT_ALLOWED), null);
    base(options, (err, socket) => {
      if (err || !socket) return callback(err ?? new Error('no socket'), null);
      // The last word: whatever resolution happened, this is where the bytes would go.
      if (!policy.allows(socket.remoteAddress ?? '')) {
        socket.destroy();
        return callback(new OutboundError('address_not_allowed', NOT_ALLOWED), null);
      }
      callback(null, socket);
    });
  };
  const agent = new Agent({ connect: connector, connections: opts.connectionsPerOrigin ?? 10, keepAliveTimeout: 10_000 });

  return {
    async request(input, req = {}) {
      const checked = checkUrl(input, settings);
      if (!checked.ok) throw new OutboundError(checked.code, checked.reason);
      const timeoutMs = req.timeoutMs ?? 15_000;
      const max = req.maxResponseBytes ?? 64 * 1024;
      const started = performance.now();
      const abort = new AbortController();
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        abort.abort();
      }, timeoutMs);
      try {
        const res = await undiciRequest(checked.url, {
          dispatcher: agent,
          method: (req.method ?? 'GET') as 'GET',
          headers: req.headers,
          body: req.body,
          signal: abort.signal,
          // The overall timer above is the limit; undici's own per-phase timers must not fire first.
          headersTimeout: 0,
          bodyTimeout: 0,
        });
        const declared = Number(res.headers['content-length']);
        if (req.onTooLarge === 'fail' && Number.isFinite(declared) && declared > max) {
          res.body.destroy();
          throw new OutboundError('response_too_large', `the response is larger than ${max} bytes`);
        }
        const chunks: Buffer[] = [];
        let size = 0;
        let truncated = false;
        for await (const chunk of res.body) {
          const b = chunk as Buffer;
          if (size + b.length > max) {
            chunks.push(b.subarray(0, max - size));
            size = max;
            truncated = true;
            break; // leaving the loop destroys the stream: nothing more is read
          }
          chunks.push(b);
          size += b.length;
        }
        if (truncated && req.onTooLarge === 'fail') throw new OutboundError('response_too_large', `the response is larger than ${max} bytes`);
        return {
          status: res.statusCode,
          headers: res.headers,
          body: Buffer.concat(chunks, size),
          truncated,
          durationMs: Math.round(performance.now() - started),
        };
      } catch (err) {
        throw toOutboundError(err, timedOut);
      } finally {
        clearTimeout(timer);
      }
    },
    close: () => agent.close(),
  };
};
