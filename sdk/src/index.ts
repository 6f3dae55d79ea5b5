/**
 * @parley/sdk: the TypeScript client of the Parley API. The types and the operation table are
 * generated from the service's OpenAPI document at build time (openapi-typescript); the calls go
 * through openapi-fetch; this package adds what generators leave out: the envelope taken off,
 * typed errors, pages as an async iterator, Idempotency-Key on creates, retries on 429/503.
 */
export { createParley, type ParleyClient, type ParleyOptions, type ScopedClient } from './client.js';
export { ParleyError, type ErrorDetail } from './errors.js';
export type { RetryOptions, Timing } from './retry.js';
export type { Args, CallOptions, ItemOf, ListOperationId, OperationId, Operations, Page, Result, Schemas } from './types.js';
export type { components, operations, paths } from './generated/schema.js';
