// The one HTTP client for outbound traffic (tool webhooks, event hooks).
//
// Every request: parse the URL, resolve the host (or parse the literal), judge
// EVERY resolved address with the policy, then connect only to an address that
// was judged. The undici connector is given the checked IP instead of the name,
// so there is no second resolution and no DNS-rebinding window; SNI and the Host
// header still carry the original name. Redirects are never followed.
//
// Error messages are built only from our own templates plus hostname/port and
// error codes: header values, bodies and URL paths/queries (which may carry
// tokens) are never echoed, and the underlying error is not attached as `cause`.
// Messages reach tenants (a delivery's lastError), so they never name the address
// a host name resolved to: that would let a tenant read internal DNS answers.
// The address and the policy's reason are kept in `detail`, for the log only.
import { lookup as dnsLookup } from 'node:dns/promises';
import { Pool, buildConnector } from 'undici';
import { parseHostLiteral } from './address.ts';
import type { HostLiteral } from './address.ts';
import { checkAddress } from './policy.ts';
import type { AllowList } from './policy.ts';

export type EgressFailureKind = 'invalid_url' | 'refused_address' | 'dns' | 'connect' | 'timeout' | 'too_large' | 'aborted';

export class EgressError extends Error {
  readonly kind: EgressFailureKind;
  /** Low-level code (ECONNREFUSED, UND_ERR_..., or a policy category) when there is one. */
  readonly code: string | undefined;
  /** For the log, never for a tenant: what the message leaves out (the resolved address, the policy's reason). */
  readonly detail: string | undefined;
  constructor(kind: EgressFailureKind, message: string, code?: string, detail?: string) {
    super(message);
    this.name = 'EgressError';
    this.kind = kind;
    this.code = code;
    this.detail = detail;
  }
}

export type EgressLookup = (hostname: string) => Promise<{ address: string; family: number }[]>;

export interface EgressOptions {
  allow: AllowList;
  /** Injectable for tests; defaults to dns.lookup with all: true. */
  lookup?: EgressLookup;
  /** Per-address TCP/TLS connect timeout; default 5000. */
  connectTimeoutMs?: number;
}

export interface EgressRequest {
  url: string;
  /** Defaults to POST when a body is given, else GET. */
  method?: 'POST' | 'GET' | 'PUT';
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Total budget: DNS + connect + headers + body. */
  timeoutMs: number;
  maxResponseBytes: number;
  signal?: AbortSignal;
}

export interface EgressResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  latencyMs: number;
}

export interface EgressTarget {
  url: URL;
  hostname: string;
  /** Every address the host resolved to, all allowed by the policy, in resolver order. */
  addresses: HostLiteral[];
}

const defaultLookup: EgressLookup = (hostname) => dnsLookup(hostname, { all: true });

/**
 * Parse and judge a URL without connecting. Throws EgressError (invalid_url, dns,
 * refused_address). Decision: if the name resolves to ANY refused address the
 * whole request is refused, rather than silently using only the allowed ones; a
 * name that mixes public and internal addresses is misconfigured or hostile, and
 * refusing it makes the outcome independent of resolver ordering.
 */
export async function resolveEgressTarget(rawUrl: string, allow: AllowList, lookup: EgressLookup = defaultLookup): Promise<EgressTarget> {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw new EgressError('invalid_url', 'invalid URL'); // the URL itself may contain secrets
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new EgressError('invalid_url', `unsupported URL scheme ${url.protocol.slice(0, 16)} (only http and https)`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new EgressError('invalid_url', 'credentials in the URL are not supported; send them as a header');
  }
  const hostname = url.hostname;
  const literal = parseHostLiteral(hostname);
  let addresses: HostLiteral[];
  if (literal) {
    addresses = [literal];
  } else {
    let results: { address: string; family: number }[];
    try {
      results = await lookup(hostname);
    } catch (err) {
      const code = errorCode(err);
      throw new EgressError('dns', `DNS lookup for ${hostname} failed${code ? ` (${code})` : ''}`, code);
    }
    addresses = [];
    for (const r of results) {
      const parsed = parseHostLiteral(r.address);
      if (!parsed) throw new EgressError('dns', `DNS lookup for ${hostname} returned a non-IP answer`);
      if (!addresses.some((a) => a.address === parsed.address)) addresses.push(parsed);
    }
    if (addresses.length === 0) throw new EgressError('dns', `DNS lookup for ${hostname} returned no addresses`);
  }
  for (const ip of addresses) {
    const verdict = checkAddress(ip.address, allow);
    if (!verdict.allowed) {
      const via = literal ? '' : ` resolved to ${ip.address}:`;
      throw new EgressError('refused_address', `egress to ${hostname} refused by the egress policy`, verdict.category, `${hostname}${via} ${verdict.reason}`);
    }
  }
  return { url, hostname, addresses };
}

function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code.slice(0, 64) : undefined;
}

/** A connector that dials only the checked addresses, in order, falling back on connect failure. */
function pinnedConnector(addresses: readonly HostLiteral[], connectTimeoutMs: number): buildConnector.connector {
  const base = buildConnector({ timeout: connectTimeoutMs });
  return (options, callback) => {
    const attempt = (i: number): void => {
      const ip = addresses[i];
      if (!ip) return;
      const hostname = ip.zone ? `${ip.address}%${ip.zone}` : ip.address;
      // `host` (the original name) still drives SNI inside undici; only the dial target changes.
      base({ ...options, hostname }, (...args) => {
        if (args[0] !== null && i + 1 < addresses.length) attempt(i + 1);
        else callback(...args);
      });
    };
    attempt(0);
  };
}

const MAX_POOLS = 64;

export function createEgress(opts: EgressOptions): { request(req: EgressRequest): Promise<EgressResponse>; close(): Promise<void> } {
  const lookup = opts.lookup ?? defaultLookup;
  const connectTimeoutMs = opts.connectTimeoutMs ?? 5000;
  // Keep-alive pools keyed by origin AND the exact checked addresses, so a pooled
  // connection is only reused when this request's resolution was judged identical.
  const pools = new Map<string, Pool>();
  let closed = false;

  function poolFor(target: EgressTarget): Pool {
    const key = `${target.url.origin} ${target.addresses.map((a) => a.address).join(',')}`;
    const existing = pools.get(key);
    if (existing) {
      pools.delete(key); // re-insert: Map order doubles as LRU order
      pools.set(key, existing);
      return existing;
    }
    const pool = new Pool(target.url.origin, {
      connect: pinnedConnector(target.addresses, connectTimeoutMs),
      connections: 16,
      keepAliveTimeout: 4_000,
    });
    pools.set(key, pool);
    if (pools.size > MAX_POOLS) {
      const [oldKey, oldPool] = pools.entries().next().value as [string, Pool];
      pools.delete(oldKey);
      oldPool.close().catch(() => undefined); // graceful: in-flight requests finish
    }
    return pool;
  }

  async function request(req: EgressRequest): Promise<EgressResponse> {
    const started = performance.now();
    if (!(req.timeoutMs > 0) || !(req.maxResponseBytes >= 0)) throw new RangeError('timeoutMs must be > 0 and maxResponseBytes >= 0');
    if (closed) throw new EgressError('aborted', 'egress client is closed');
    if (req.signal?.aborted) throw new EgressError('aborted', 'request aborted by caller');
    const host = URL.parse(req.url)?.host ?? '(invalid URL)'; // host only: paths/queries may hold tokens
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, req.timeoutMs);
    const onAbort = (): void => controller.abort();
    req.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const target = await raceAbort(resolveEgressTarget(req.url, opts.allow, lookup), controller.signal);
      // The Host header always names the original host; callers cannot retarget it.
      const headers = Object.fromEntries(Object.entries(req.headers ?? {}).filter(([name]) => name.toLowerCase() !== 'host'));
      const res = await poolFor(target).request({
        path: `${target.url.pathname}${target.url.search}`,
        method: req.method ?? (req.body === undefined ? 'GET' : 'POST'),
        headers,
        body: req.body ?? null,
        signal: controller.signal,
        headersTimeout: req.timeoutMs,
        bodyTimeout: req.timeoutMs,
      });
      const body = await readCapped(res.body, res.headers['content-length'], req.maxResponseBytes);
      if (body === null) {
        // Tear the connection down instead of draining the rest of an oversized body.
        res.body.destroy();
        controller.abort();
        throw new EgressError('too_large', `response from ${host} exceeds ${req.maxResponseBytes} bytes`);
      }
      return { status: res.statusCode, headers: res.headers, body, latencyMs: Math.round(performance.now() - started) };
    } catch (err) {
      throw classify(err, host, req.timeoutMs, timedOut, req.signal?.aborted === true);
    } finally {
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', onAbort);
    }
  }

  async function close(): Promise<void> {
    closed = true;
    const all = [...pools.values()];
    pools.clear();
    await Promise.all(all.map((p) => p.destroy().catch(() => undefined)));
  }

  return { request, close };
}

/** The body as UTF-8, or null as soon as it is known to exceed `max` (chunks read so far are dropped). */
async function readCapped(body: AsyncIterable<Buffer>, contentLength: string | string[] | undefined, max: number): Promise<string | null> {
  if (Number(contentLength) > max) return null;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > max) return null; // leaving the loop destroys the stream
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}

function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  // DNS lookups cannot be cancelled, but the total budget must still bound them.
  return new Promise<T>((resolve, reject) => {
    // Not an EgressError: classify() decides between timeout and caller abort.
    const onAbort = (): void => reject(new Error('aborted'));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    void promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);

function classify(err: unknown, host: string, timeoutMs: number, timedOut: boolean, callerAborted: boolean): EgressError {
  if (err instanceof EgressError) return err;
  if (timedOut) return new EgressError('timeout', `request to ${host} timed out after ${timeoutMs}ms`);
  if (callerAborted) return new EgressError('aborted', `request to ${host} aborted by caller`);
  const code = errorCode(err);
  if (code && TIMEOUT_CODES.has(code)) return new EgressError('timeout', `request to ${host} timed out (${code})`, code);
  if (code === 'UND_ERR_INVALID_ARG' || code === 'ERR_INVALID_ARG_TYPE' || code === 'ERR_INVALID_CHAR') {
    // undici validated the headers/body; its message could quote them, so it is not reused.
    return new EgressError('invalid_url', `request to ${host} rejected: invalid method, headers or body`, code);
  }
  return new EgressError('connect', `request to ${host} failed${code ? ` (${code})` : ''}`, code);
}
