/**
 * The types of each operation, read from the generated `operations` (openapi-typescript): what a
 * call takes (path, query, body) and what it answers once the envelope is taken off.
 */
import type { components, operations } from './generated/schema.js';

/** Every named schema of the API: `Schemas['Assistant']`, `Schemas['AssistantUpdate']`… */
export type Schemas = components['schemas'];
export type OperationId = keyof operations;

type Parameters<K extends OperationId> = operations[K]['parameters'];
type Located<K extends OperationId, Where extends string> = Parameters<K> extends { [W in Where]?: infer P } ? ([NonNullable<P>] extends [never] ? object : NonNullable<P>) : object;
type RequiredKeys<T> = { [P in keyof T]-?: object extends Pick<T, P> ? never : P }[keyof T];
/** `{ name: T }` when T has a required key, else `{ name?: T }`; nothing when T is empty. */
type Part<Name extends string, T> = [keyof T] extends [never] ? { [N in Name]?: never }
  : [RequiredKeys<T>] extends [never] ? { [N in Name]?: T } : { [N in Name]: T };

/** The JSON body an operation takes (PATCH takes application/json beside merge-patch+json). */
type BodyOf<K extends OperationId> = operations[K] extends { requestBody?: { content: infer C } }
  ? C extends { 'application/json': infer B } ? B : C[keyof C]
  : never;
type BodyPart<K extends OperationId> = [BodyOf<K>] extends [never] ? { body?: never }
  : operations[K] extends { requestBody: object } ? { body: BodyOf<K> } : { body?: BodyOf<K> };

/** What every call may add. */
export interface CallOptions {
  /** The Idempotency-Key of a create; one is made per call when left out (the same across its retries). */
  idempotencyKey?: string;
  /** Extra request headers (If-Match…). */
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** The arguments of an operation, less the path parameters a scoped client fills in (`S`). */
export type Args<K extends OperationId, S extends string = never> =
  Part<'path', Omit<Located<K, 'path'>, S>> & Part<'query', Located<K, 'query'>> & BodyPart<K> & CallOptions;

/** The arguments as a parameter list: optional when nothing in them is required. */
export type ArgsList<K extends OperationId, S extends string = never> =
  [RequiredKeys<Args<K, S>>] extends [never] ? [args?: Args<K, S>] : [args: Args<K, S>];

type Success<K extends OperationId> = operations[K]['responses'] extends infer R
  ? R extends { 200: { content: infer C } } ? C : R extends { 201: { content: infer C } } ? C : never
  : never;
type SuccessBody<K extends OperationId> = Success<K> extends { 'application/json': infer J } ? J : string;

/** One page of a list, as the API answers it (without `success`, `timestamp` and `traceId`). */
export interface Page<T> {
  data: T[];
  page: number;
  size: number;
  totalElements: number;
  totalPages: number;
}

/**
 * What a call resolves to: a list's page, a single resource's `data` (null for updates and
 * deletes), or the text of a response that is not JSON (TwiML).
 */
export type Result<K extends OperationId> = SuccessBody<K> extends { totalElements: number; data: (infer T)[] } ? Page<T>
  : SuccessBody<K> extends { success: boolean; data: infer D } ? D
  : SuccessBody<K>;

/** The operations that answer a page: those `paginate` walks. */
export type ListOperationId = { [K in OperationId]: SuccessBody<K> extends { totalElements: number } ? K : never }[OperationId];
export type ItemOf<K extends ListOperationId> = Result<K> extends Page<infer T> ? T : never;

/** A method per operation, named by its operationId. */
export type Operations<S extends string = never> = { [K in OperationId]: (...args: ArgsList<K, S>) => Promise<Result<K>> };
