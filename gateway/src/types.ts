import type { Logger } from '@mailer/kit';
import type { AuthenticatedAccount } from './accounts/accounts';

// What the gateway's middleware attaches to each request.
declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** X-Request-Id of this request (echoed or generated). */
      requestId: string;
      /** Logger bound to this request (requestId, and accountId once known). */
      log: Logger;
      /** Set by the authentication middleware. */
      account?: AuthenticatedAccount;
    }
  }
}

export {};
