// INTERIM, until @mailer/outbound (i14-guard) is merged: the OutboundClient over Node's fetch, with the
// delivery rules that do not need the guard (no redirects, the timeout, the response cap). It does NOT
// check addresses: server.ts switches to createOutbound(outboundSettings(env)) once the guard exists.
import type { OutboundClient } from './attempt-delivery';

export function interimOutbound(): OutboundClient {
  return {
    async request(url, opts) {
      let res: Response;
      try {
        res = await fetch(url, { method: opts.method, headers: opts.headers, body: opts.body, redirect: 'manual', signal: AbortSignal.timeout(opts.timeoutMs) });
      } catch (err) {
        const e = err as Error & { cause?: { code?: string } };
        if (e.name === 'TimeoutError') throw new Error(`no response within ${opts.timeoutMs / 1000} s`);
        throw new Error(`connection failed${e.cause?.code ? ` (${e.cause.code})` : ''}`);
      }
      const chunks: Buffer[] = [];
      let size = 0;
      const reader = res.body?.getReader();
      try {
        while (reader && size < opts.maxResponseBytes) {
          const { done, value } = await reader.read();
          if (done) break;
          chunks.push(Buffer.from(value));
          size += value.length;
        }
      } catch {
        // A response cut short is still the status it answered.
      } finally {
        await reader?.cancel().catch(() => undefined);
      }
      const headers: Record<string, string> = {};
      res.headers.forEach((v, k) => (headers[k] = v));
      return { status: res.status, headers, body: Buffer.concat(chunks).subarray(0, opts.maxResponseBytes) };
    },
  };
}
