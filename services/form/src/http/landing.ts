import { Router } from 'express';
import type { FormHttpDeps } from './app';

/** Placeholder: slice i12-pages replaces this body with GET /public/pages/{routePath}. */
export function landingRoutes(_deps: FormHttpDeps): Router {
  return Router();
}
