import { createParley, ParleyError, type ErrorDetail, type ParleyClient } from '@parley/sdk';
import type { Scope } from './types';

/**
 * The public API through @parley/sdk: one method per operationId, typed by the service's OpenAPI
 * document (generated when the SDK is built), answering the envelope's `data` (a list: its page).
 */
export type Api = ParleyClient;
export type FieldError = ErrorDetail;

/** An error envelope from the API, kept whole so a form can show each detail at its field. */
export { ParleyError as ApiError };

export function createApi(token: () => string | null, onUnauthorized: () => void): Api {
  return createParley({
    // The page's own origin: the service serves the console.
    baseUrl: '',
    token,
    middleware: [{
      onResponse({ response }) {
        if (response.status === 401) onUnauthorized();
        return response;
      },
    }],
  });
}

/** The operations of the organization the pages work in. */
export const inOrganization = (api: Api, scope: Scope) => api.organization(scope.vendorId, scope.organizationId);

export function errorText(error: unknown): string {
  if (error instanceof ParleyError) return `${error.message} (${error.status} ${error.code})`;
  return error instanceof Error ? error.message : String(error);
}
