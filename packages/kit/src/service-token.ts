// Service tokens: every internal gRPC call says which process makes it, signed with a key derived from
// INTERNAL_GRPC_SECRET, and every server checks the signature and whether that process may call it
// (GRPC_CALLS). A token lives a minute, so one seen on the wire is soon worthless; it is a bearer
// token, so the network policy still decides who can reach a port at all.
import { createHmac, createSecretKey, hkdfSync, timingSafeEqual } from 'node:crypto';

/** The metadata key carrying `Bearer <token>`. */
export const SERVICE_TOKEN_KEY = 'authorization';
const VERSION = 'svc1';
/** Seconds a token is valid; a client signs a new one when the one it holds has less than half left. */
export const SERVICE_TOKEN_LIFETIME_S = 60;
/** Clock difference tolerated between pods, both ways. */
const SKEW_S = 30;
const NAME = /^[a-z][a-z0-9-]{0,62}$/;

export type ServiceTokenCheck = { ok: true; caller: string } | { ok: false; reason: 'missing' | 'malformed' | 'bad signature' | 'expired' };

export interface ServiceTokens {
  /** `Bearer <token>` naming `caller`, valid for SERVICE_TOKEN_LIFETIME_S from `nowMs`. */
  sign(caller: string, nowMs?: number): string;
  /** Checks an `authorization` value: signature (constant time), lifetime, and a caller name. */
  verify(header: string | undefined, nowMs?: number): ServiceTokenCheck;
}

export function serviceTokens(secret: string): ServiceTokens {
  if (Buffer.byteLength(secret) < 32) throw new Error('INTERNAL_GRPC_SECRET must be at least 32 characters');
  // A key of its own: the secret is never used directly, so this use cannot be confused with another.
  // (a KeyObject: createHmac would import a Buffer key anew on every call, several times the MAC's cost)
  const key = createSecretKey(Buffer.from(hkdfSync('sha256', secret, 'mailer.grpc', 'service-token.v1', 32)));
  const mac = (body: string) => createHmac('sha256', key).update(body).digest();

  return {
    sign(caller, nowMs = Date.now()) {
      if (!NAME.test(caller)) throw new Error(`not a process name: ${caller}`);
      const body = `${VERSION}.${caller}.${Math.floor(nowMs / 1000) + SERVICE_TOKEN_LIFETIME_S}`;
      return `Bearer ${body}.${mac(body).toString('base64url')}`;
    },
    verify(header, nowMs = Date.now()) {
      if (!header) return { ok: false, reason: 'missing' };
      const m = /^Bearer (svc1\.([a-z][a-z0-9-]{0,62})\.(\d{1,12}))\.([A-Za-z0-9_-]{43})$/.exec(header);
      if (!m) return { ok: false, reason: 'malformed' };
      const [, body, caller, expires, signature] = m;
      if (!timingSafeEqual(mac(body), Buffer.from(signature, 'base64url'))) return { ok: false, reason: 'bad signature' };
      const left = Number(expires) - nowMs / 1000;
      // Expired, or valid for longer than any token we sign (a clock far off, or not our token).
      if (left < -SKEW_S || left > SERVICE_TOKEN_LIFETIME_S + SKEW_S) return { ok: false, reason: 'expired' };
      return { ok: true, caller };
    },
  };
}

/** This process's identity for its outgoing calls: who it is and how it signs. */
interface Identity {
  name: string;
  tokens: ServiceTokens;
  current?: { header: string; renewAtMs: number };
}
let identity: Identity | undefined;

/**
 * Makes every gRPC client of this process (createClient) sign its calls as `name`. Called once at
 * start by the process runtime; without a secret, calls go unsigned (servers then refuse them if
 * they check).
 */
export function useServiceIdentity(name: string, secret: string | undefined): void {
  identity = secret ? { name, tokens: serviceTokens(secret) } : undefined;
}

/** The `authorization` value for an outgoing call now, or undefined when this process has no identity. */
export function outgoingServiceToken(nowMs = Date.now()): string | undefined {
  if (!identity) return undefined;
  // One HMAC per half lifetime, not per call.
  if (!identity.current || nowMs >= identity.current.renewAtMs) {
    identity.current = { header: identity.tokens.sign(identity.name, nowMs), renewAtMs: nowMs + (SERVICE_TOKEN_LIFETIME_S * 1000) / 2 };
  }
  return identity.current.header;
}
