// The DomainError a call that must be refused throws (its errorId, message, details), for use-case
// tests; a call that succeeds, or throws anything else, fails the test.
import { DomainError } from '@mailer/kit';

export async function refusal(call: Promise<unknown>): Promise<DomainError> {
  let outcome: unknown;
  try {
    outcome = await call;
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
  throw new Error(`expected a refusal, got an answer: ${JSON.stringify(outcome)?.slice(0, 300)}`);
}
