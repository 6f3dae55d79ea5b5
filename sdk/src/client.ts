import createClient, { type Client, type Middleware } from 'openapi-fetch';
import { ParleyError } from './errors.js';
import { OPERATIONS } from './generated/operations.js';
import type { paths } from './generated/schema.js';
import { realTiming, retrying, type RetryOptions, type Timing } from './retry.js';
import type { CallOptions, ItemOf, ListOperationId, OperationId, Operations, Page } from './types.js';

export interface ParleyOptions {
  /** Where the service is: `http://127.0.0.1:8080`; '' for the page's own origin in a browser. */
  baseUrl: string;
  /** A `prl_` API token or the platform admin token; a function is asked before every request. */
  token?: string | null | (() => string | null | undefined);
  /** Sending again on 429 and 503 (honouring Retry-After); `false` sends each request once. */
  retry?: RetryOptions | false;
  /** Gives up on a call (retries included) after this long, in ms. Default 30,000; 0 never. */
  timeoutMs?: number;
  /** openapi-fetch middleware, run on every request and response (a 401 handler, logging…). */
  middleware?: Middleware[];
  fetch?: (request: Request) => Promise<Response>;
  /** The clock of the retries' waits (tests). */
  timing?: Timing;
}

/** The operations of a scope: the path parameters named by `S` (vendorId, organizationId) are filled in. */
export type ScopedClient<S extends string> = Operations<S> & {
  /** Every item of a list, page after page (100 at a time unless `query.size` says otherwise). */
  paginate<K extends ListOperationId>(operationId: K, ...args: Parameters<Operations<S>[K]>): AsyncGenerator<ItemOf<K>, void, undefined>;
};

export type ParleyClient = ScopedClient<never> & {
  /** The operations of one vendor: `vendorId` is filled in. */
  vendor(vendorId: string): ScopedClient<'vendorId'>;
  /** The operations of one organization: `vendorId` and `organizationId` are filled in. */
  organization(vendorId: string, organizationId: string): ScopedClient<'vendorId' | 'organizationId'>;
  /** The generated openapi-fetch client underneath, by path (the envelope is not taken off there). */
  readonly raw: Client<paths>;
};

/** The arguments of any operation, as the runtime handles them (the types are checked per operation). */
type AnyArgs = { path?: Record<string, unknown>; query?: Record<string, unknown>; body?: unknown } & CallOptions;
type Call = (operationId: OperationId, args: AnyArgs | undefined) => Promise<unknown>;

/** An Idempotency-Key: 128 random bits (crypto.getRandomValues works outside secure contexts too). */
function newKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `sdk_${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

async function bodyOf(response: Response): Promise<unknown> {
  const text = await response.text();
  if (!/\bjson\b/i.test(response.headers.get('content-type') ?? '')) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

const isEnvelope = (body: unknown): body is Record<string, unknown> => typeof body === 'object' && body !== null && 'success' in body;

/** The envelope taken off: a list's page, else `data`. */
function unwrap(body: Record<string, unknown>): unknown {
  const { success: _s, timestamp: _t, traceId: _id, message: _m, ...rest } = body;
  return 'totalElements' in rest ? rest : rest.data;
}

function scoped<S extends string>(call: Call, fill: Record<string, string>): ScopedClient<S> {
  const client: Record<string, unknown> = {};
  const withScope = (args: AnyArgs | undefined): AnyArgs => ({ ...args, path: { ...fill, ...args?.path } });
  for (const id of Object.keys(OPERATIONS) as OperationId[]) client[id] = (args?: AnyArgs) => call(id, withScope(args));
  client.paginate = async function* (id: ListOperationId, args?: AnyArgs) {
    const query = (args?.query ?? {}) as { page?: number; size?: number };
    const size = query.size ?? 100;
    for (let page = query.page ?? 0; ; page++) {
      const answer = (await call(id, withScope({ ...args, query: { ...query, page, size } }))) as Page<unknown>;
      yield* answer.data;
      if (answer.data.length < size || page + 1 >= answer.totalPages) return;
    }
  };
  return client as ScopedClient<S>;
}

/**
 * The Parley API, one method per operationId (`createAssistant`, `listAgentTasks`…): each takes
 * `{ path, query, body }` as /openapi.json describes them and answers the envelope's `data` (a
 * list: its page), or throws a ParleyError. See docs/sdk.md.
 */
export function createParley(options: ParleyOptions): ParleyClient {
  const { token, timeoutMs = 30_000 } = options;
  const send = options.fetch ?? ((request: Request) => fetch(request));
  const raw = createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    fetch: options.retry === false ? send : retrying(send, options.retry ?? {}, options.timing ?? realTiming),
  });
  raw.use({
    onRequest({ request }) {
      const value = typeof token === 'function' ? token() : token;
      if (value) request.headers.set('authorization', `Bearer ${value}`);
      return request;
    },
  });
  if (options.middleware?.length) raw.use(...options.middleware);

  const call: Call = async (operationId, args = {}) => {
    const operation = OPERATIONS[operationId];
    const headers: Record<string, string> = { accept: 'application/json', ...args.headers };
    if (operation.idempotent) headers['idempotency-key'] = args.idempotencyKey ?? newKey();
    const signals = [args.signal, timeoutMs > 0 ? AbortSignal.timeout(timeoutMs) : undefined].filter((s): s is AbortSignal => s !== undefined);
    const init = {
      params: { path: args.path, query: args.query },
      body: args.body,
      headers,
      parseAs: 'stream',
      ...(signals.length ? { signal: signals.length === 1 ? signals[0] : AbortSignal.any(signals) } : {}),
    };
    // The table and the generated paths agree by construction (both come from one document).
    const { response, error } = await raw.request(operation.method, operation.path as never, init as never);
    // openapi-fetch has read an error's body already (JSON, else text); a success's is still ours.
    if (!response.ok) throw ParleyError.of(response, error);
    const body = await bodyOf(response);
    if (!operation.json) return body;
    // Something answered, but not Parley (a proxy's page, another service on that port).
    if (!isEnvelope(body)) throw ParleyError.of(response, body);
    return unwrap(body);
  };

  const root = scoped<never>(call, {}) as ParleyClient;
  return Object.assign(root, {
    raw,
    vendor: (vendorId: string) => scoped<'vendorId'>(call, { vendorId }),
    organization: (vendorId: string, organizationId: string) => scoped<'vendorId' | 'organizationId'>(call, { vendorId, organizationId }),
  });
}

