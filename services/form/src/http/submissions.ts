import { Router } from 'express';
import type { FormHttpDeps } from './app';

/** POST /public/forms/{formId}/submissions (slice i12-submit; not implemented yet). */
export function submissionRoutes(_deps: FormHttpDeps): Router {
  return Router();
}
