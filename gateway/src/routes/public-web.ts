// The public web surface (the API contract "Public web surface"): reader-facing pages that carry no API key are
// forwarded as HTTP to the service that owns them (tracking /t/* and unsubscribe /u/* -> messaging;
// /public/forms/*, /public/pages/*, /public/confirm/* -> form); /favicon.ico is answered here. Mounted before authentication and any
// body parser, so the owner gets the request's body untouched.
import http from 'node:http';
import type { RequestHandler, Request, Response } from 'express';
import { createProxyMiddleware, debugProxyErrorsPlugin, proxyEventsPlugin, type Options, type Plugin } from 'http-proxy-middleware';
import { contentSecurityPolicy, type Logger } from '@mailer/kit';
import { messagePage, STYLESHEET } from '@mailer/kit/html';
import type { GatewayMetrics } from '../metrics';
import { rateLimitHeaders, type Limit } from '../ratelimit/decide';
import { addressBudgetKey, type RateLimiter } from '../ratelimit/limiter';

/** Each public prefix and the setting naming its owner's HTTP listener. */
export const PUBLIC_PREFIXES = [
  { prefix: '/t/', upstream: 'MESSAGING_HTTP_ADDR' },
  { prefix: '/u/', upstream: 'MESSAGING_HTTP_ADDR' },
  { prefix: '/public/forms/', upstream: 'FORM_HTTP_ADDR' },
  { prefix: '/public/pages/', upstream: 'FORM_HTTP_ADDR' },
  { prefix: '/public/confirm/', upstream: 'FORM_HTTP_ADDR' },
] as const;
export type PublicUpstream = (typeof PUBLIC_PREFIXES)[number]['upstream'];
const FAVICON = '/favicon.ico';

/** Whether a request path (query allowed) is on the public web surface, forwarded to its owner. */
export const isPublicWebPath = (url: string): boolean => PUBLIC_PREFIXES.some((p) => url.startsWith(p.prefix));

export interface PublicWebDeps {
  logger: Logger;
  metrics: GatewayMetrics;
  limiter: RateLimiter;
  /** host:port of each owner's HTTP listener. */
  upstreams: Record<PublicUpstream, string>;
  /** Requests per client address and minute over all public prefixes (token bucket, burst = the same). */
  perMinute: number;
  /** How long an owner may take to answer before the reader gets the 503 page. */
  timeoutMs?: number;
}

/** Budget key of an address's public-page requests: apart from its authentication-failure budget. */
export const publicBudgetKey = (address: string) => `${addressBudgetKey(address)}.public`;

export function publicWebLimits(perMinute: number): Limit[] {
  return [{ kind: 'bucket', name: 'minute', count: perMinute, windowMs: 60_000, burst: perMinute }];
}

/** The owners' reader pages' policy: their one stylesheet (by hash), nothing else, no framing. */
const PAGE_CSP = contentSecurityPolicy({ inlineStyles: [STYLESHEET] });

/** A plain HTML answer in the reader pages' style (reader pages never get the API's JSON errors). */
function plainPage(res: Response | http.ServerResponse, status: number, title: string, text: string, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, {
    'Content-Type': 'text/html; charset=utf-8',
    'Cache-Control': 'no-store',
    'Content-Security-Policy': PAGE_CSP,
    'X-Content-Type-Options': 'nosniff',
    ...headers,
  });
  res.end(messagePage(title, text));
}

/**
 * True when the request's path stays inside `prefix` whatever the owner's router makes of it: no
 * dot segments, no encoded slash or backslash (`..%2f` would become `../` after decoding), no
 * backslash, no NUL, no double encoding of those, valid percent-encoding. Legitimate public URLs (tokens, slugs) never need these.
 */
export function staysInPrefix(rawPath: string, prefix: string): boolean {
  if (!rawPath.startsWith(prefix)) return false;
  if (/%(2f|5c|00)/i.test(rawPath) || rawPath.includes('\\')) return false;
  let decoded: string;
  try {
    decoded = decodeURIComponent(rawPath);
  } catch {
    return false;
  }
  // Double encoding (`%252f`) would only turn into `../` at a second decoding: refused as well.
  if (decoded.includes('\0') || decoded.includes('\\') || /%(2e|2f|5c|00)/i.test(decoded)) return false;
  return !decoded.split('/').some((segment) => segment === '.' || segment === '..');
}

/** The public prefixes' middleware: per-address budget, then the owner's listener through the proxy. */
export function publicWeb(deps: PublicWebDeps): RequestHandler {
  const limits = publicWebLimits(deps.perMinute);
  const proxies = new Map<PublicUpstream, RequestHandler>();
  for (const upstream of new Set(PUBLIC_PREFIXES.map((p) => p.upstream))) {
    proxies.set(upstream, proxyTo(`http://${deps.upstreams[upstream]}`, upstream, deps));
  }

  return async (req, res, next) => {
    const rawPath = req.originalUrl.split('?')[0];
    // Browsers ask every host they show a page of for its icon (the landing pages' custom domains
    // too): no icon, no authentication, and no reason to ask again for a day.
    if (rawPath === FAVICON && (req.method === 'GET' || req.method === 'HEAD')) {
      res.locals.route = FAVICON;
      return void res.status(204).set('Cache-Control', 'public, max-age=86400').end();
    }
    const match = PUBLIC_PREFIXES.find((p) => rawPath.startsWith(p.prefix));
    if (!match) return next();
    // Metrics and the access log name the prefix, never the path: it carries a reader's token.
    res.locals.route = `${match.prefix}*`;
    if (!staysInPrefix(rawPath, match.prefix)) {
      return plainPage(res, 404, 'Not found', 'This link is not valid.');
    }
    // Resolved once (Express parses X-Forwarded-For on every read of req.ip): the budget and the owner's X-Forwarded-For.
    res.locals.clientAddress = req.ip;
    const address = req.ip ?? 'unknown';
    try {
      const decision = await deps.limiter.consume(publicBudgetKey(address), limits);
      if (!decision.allowed) {
        deps.metrics.rateLimitRejections.inc({ bucket: 'public' });
        return plainPage(res, 429, 'Too many requests', 'Please try again in a moment.', rateLimitHeaders(limits, decision));
      }
    } catch (err) {
      // The budget store (NATS) is unreachable: readers' opens, clicks and unsubscribes still go
      // through rather than being lost; the owner's own limits still hold.
      req.log.warn({ err }, 'public page rate limit unavailable; request forwarded without it');
    }
    await proxies.get(match.upstream)!(req, res, next);
  };
}

type ProxyTarget = NonNullable<Options['target']>;

/** http-proxy's target object of `http://host:port` (what it would get from url.parse; IPv6 without brackets). */
function targetOf(target: string): ProxyTarget {
  const { protocol, hostname, port } = new URL(target);
  return { protocol, hostname: hostname.replace(/^\[|\]$/g, ''), port } as ProxyTarget;
}

function proxyTo(target: string, upstream: PublicUpstream, deps: PublicWebDeps): RequestHandler {
  return createProxyMiddleware<Request, Response>({
    // Parsed once here (http-proxy would parse a string target on every request).
    target: targetOf(target),
    // Connections to the owner are kept and reused: a new TCP connection per forwarded page cost both
    // sides more than the forwarding itself. Idle ones close before the owner's keep-alive timeout
    // (Node's agent reads its `Keep-Alive: timeout` hint), so a request never meets a closing socket.
    agent: new http.Agent({ keepAlive: true, timeout: 60_000 }),
    // The default plugins would answer an error with the target's address; ours answers a plain page.
    ejectPlugins: true,
    plugins: [debugProxyErrorsPlugin, proxyEventsPlugin] as unknown as Plugin<Request, Response>[],
    proxyTimeout: deps.timeoutMs ?? 15_000,
    xfwd: false,
    on: {
      proxyReq(proxyReq, req, res) {
        // The owner sees the reader's address as this gateway resolved it (GATEWAY_TRUST_PROXY), never
        // a client-supplied chain, and this request's id. API credentials are no business of pages.
        proxyReq.setHeader('X-Forwarded-For', (res.locals.clientAddress as string | undefined) ?? '');
        proxyReq.setHeader('X-Forwarded-Proto', req.protocol);
        proxyReq.setHeader('X-Forwarded-Host', req.get('host') ?? '');
        proxyReq.setHeader('X-Request-Id', req.requestId);
        for (const h of ['x-api-key', 'authorization', 'cookie']) proxyReq.removeHeader(h);
      },
      error(err, req, res) {
        (req as Request).log?.warn({ upstream, code: (err as NodeJS.ErrnoException).code }, 'public page owner unreachable');
        if (res instanceof http.ServerResponse) plainPage(res, 503, 'Temporarily unavailable', 'This page cannot be shown right now. Please try again in a few minutes.');
        else res.destroy();
      },
    },
  });
}
