import { Router } from 'express';
import { ApiError } from '../errors';

/**
 * Key management is app-only: the spec lets an account user (and the operator, through the admin
 * listener) create, show, rotate and delete the key, never the key itself. Authentication runs
 * first, so these answer 401 without a valid key and 403 with one.
 */
export function accountRoutes(): Router {
  const router = Router();
  const forbidden = () => {
    throw new ApiError(403, 'operation_not_allowed_for_api_key', 'Managing the API key is not possible with an API key; use the application.');
  };
  router.get('/account/api-key', forbidden);
  router.post('/account/api-key', forbidden);
  router.delete('/account/api-key', forbidden);
  router.post('/account/api-key/rotate', forbidden);
  return router;
}
