import { Router } from 'express';
import type { FormHttpDeps } from './app';

/** Placeholder: slice i12-confirm replaces this body with GET/POST /public/confirm/{token}. */
export function confirmRoutes(_deps: FormHttpDeps): Router {
  return Router();
}
