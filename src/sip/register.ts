// "Can these SIP credentials register?" — one REGISTER (answering one digest
// challenge), then an immediate un-REGISTER so no binding is left behind.
// The target is user-supplied, so every resolved address passes the caller's
// egress policy before a single packet leaves.
import { randomBytes } from 'node:crypto';
import { DigestSession } from './auth.ts';
import { chooseDigestChallenge, parseDigestChallenges } from './digest.ts';
import { SipHeaders } from './message.ts';
import type { SipRequest, SipResponse } from './message.ts';
import { ResolveError, literalIp, resolveTarget } from './resolve.ts';
import type { ResolvedTarget, SipResolver } from './resolve.ts';
import { SipTimeoutError, SipTransportError, openFlow } from './transport.ts';
import type { FlowOptions, SipFlow } from './transport.ts';

export const DEFAULT_REGISTER_TIMEOUT_MS = 10_000;
/** The un-REGISTER always gets at least this long, even past the overall deadline. */
export const UNREGISTER_GRACE_MS = 1_500;
const REGISTER_EXPIRES = 60;
const MAX_MIN_EXPIRES = 3600;

export interface RegisterCheckInput {
  hostname: string;
  port?: number | null;
  transport: 'udp' | 'tcp' | 'tls';
  username: string;
  password: string;
  /** Overall budget for resolve + connect + all transactions; default 10000. */
  timeoutMs?: number;
}

export interface RegisterCheckResult {
  successful: boolean;
  statusCode: number | null;
  reason: string;
}

export type AddressVerdict = { allowed: true } | { allowed: false; reason: string };

export interface RegisterCheckDeps {
  resolver?: SipResolver;
  /** Egress policy, asked about every resolved address before anything is sent. */
  checkAddress?: (ip: string) => AddressVerdict;
  log?: { debug(obj: object, msg?: string): void };
  /** TLS trust overrides (tests, private CAs); verification stays on unless disabled here. */
  tls?: FlowOptions['tls'];
  /** RFC 3261 T1/T2 overrides for tests. */
  timers?: FlowOptions['timers'];
}

export class EgressRefusedError extends Error {
  override name = 'EgressRefusedError';
  address: string;
  reason: string;
  constructor(address: string, reason: string) {
    super(`refusing to contact ${address}: ${reason}`);
    this.address = address;
    this.reason = reason;
  }
}


const fail = (statusCode: number | null, reason: string): RegisterCheckResult => ({ successful: false, statusCode, reason });
const hex = (bytes: number): string => randomBytes(bytes).toString('hex');
const uriHost = (host: string): string => (literalIp(host)?.family === 6 ? `[${host.replace(/^\[|\]$/g, '')}]` : host);
// RFC 3261 §25.1 "user": unreserved and user-unreserved characters stay, the rest is %-escaped.
const uriUser = (user: string): string =>
  Array.from(new TextEncoder().encode(user), (b) => {
    const ch = String.fromCharCode(b);
    return /[A-Za-z0-9\-_.!~*'()&=+$,;?/]/.test(ch) ? ch : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }).join('');

function validate(input: RegisterCheckInput): string | null {
  if (!['udp', 'tcp', 'tls'].includes(input.transport)) return 'invalid transport';
  // eslint-disable-next-line no-control-regex -- control characters would corrupt SIP headers
  if (typeof input.username !== 'string' || input.username === '' || /[\x00-\x1f\x7f]/.test(input.username)) return 'invalid username';
  if (typeof input.password !== 'string' || /[\r\n\0]/.test(input.password)) return 'invalid password';
  if (typeof input.hostname !== 'string' || input.hostname.trim() === '') return 'invalid host name';
  const t = input.timeoutMs;
  if (t !== undefined && (!Number.isFinite(t) || t <= 0)) return 'invalid timeoutMs';
  return null;
}

/** Races a promise against the deadline so a hung DNS lookup cannot outlive it. */
function withDeadline<T>(signal: AbortSignal, work: Promise<T>): Promise<T> {
  if (signal.aborted) return Promise.reject(new SipTimeoutError());
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new SipTimeoutError());
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

class Registration {
  readonly #callId = `${hex(12)}@parley`;
  readonly #fromTag = hex(8);
  readonly #requestUri: string;
  readonly #aor: string;
  readonly #contact: string;
  readonly #digest: DigestSession;
  #cseq = 0;
  /** Set once the registrar has answered anything: from then on, no failover. */
  answered = false;

  constructor(
    private readonly flow: SipFlow,
    private readonly input: RegisterCheckInput,
    private readonly log: RegisterCheckDeps['log'],
  ) {
    const host = uriHost(input.hostname);
    const transportParam = input.transport === 'udp' ? '' : `;transport=${input.transport}`;
    this.#requestUri = `sip:${host}${input.port ? `:${input.port}` : ''}${transportParam}`;
    this.#aor = `sip:${uriUser(input.username)}@${host}`;
    this.#contact = `<sip:${uriUser(input.username)}@${uriHost(flow.local.address)}:${flow.local.port};transport=${input.transport}>`;
    this.#digest = new DigestSession({ username: input.username, password: input.password });
  }

  #build(expires: number): SipRequest {
    const { flow } = this;
    const headers = new SipHeaders()
      .append('Via', `SIP/2.0/${flow.transport.toUpperCase()} ${uriHost(flow.local.address)}:${flow.local.port};branch=z9hG4bK${hex(12)};rport`)
      .append('Max-Forwards', '70')
      .append('From', `<${this.#aor}>;tag=${this.#fromTag}`)
      .append('To', `<${this.#aor}>`)
      .append('Call-ID', this.#callId)
      .append('CSeq', `${++this.#cseq} REGISTER`)
      .append('Contact', this.#contact)
      .append('Expires', String(expires))
      .append('User-Agent', 'Parley');
    return { kind: 'request', method: 'REGISTER', uri: this.#requestUri, headers, body: Buffer.alloc(0) };
  }

  /**
   * One REGISTER, answering challenges: a fresh challenge once, a stale=true one
   * once more, and (for the un-REGISTER, whose password is already proven) one
   * re-challenge of a reused nonce. Returns the last final response.
   */
  async exchange(expires: number, opts: { signal?: AbortSignal; retryRechallenge?: boolean } = {}): Promise<SipResponse> {
    const round = this.#digest.round({ rechallenge: opts.retryRechallenge ?? false });
    let intervalRetry = true;
    for (let attempt = 0; attempt < 5; attempt++) {
      const req = this.#build(expires);
      round.authorize(req);
      const withCredentials = req.headers.has('Authorization') || req.headers.has('Proxy-Authorization');
      const res = await this.flow.request(req, opts.signal ? { signal: opts.signal } : {});
      this.answered = true;
      this.log?.debug({ status: res.status, expires, withCredentials }, 'sip register: response');
      if (res.status === 423 && intervalRetry) {
        const min = Number(res.headers.get('Min-Expires'));
        if (!Number.isInteger(min) || min <= expires || min > MAX_MIN_EXPIRES) return res;
        intervalRetry = false;
        expires = min;
        continue;
      }
      if (!round.challenged(res)) return res;
    }
    throw new SipTransportError('registrar kept challenging');
  }
}

async function checkOne(flow: SipFlow, input: RegisterCheckInput, deps: RegisterCheckDeps, started: number, timeoutMs: number): Promise<RegisterCheckResult> {
  const reg = new Registration(flow, input, deps.log);
  let res: SipResponse;
  try {
    res = await reg.exchange(REGISTER_EXPIRES);
  } catch (err) {
    if (err instanceof SipTransportError && !reg.answered) throw err; // caller may fail over
    if (err instanceof SipTimeoutError) return fail(null, 'timeout');
    if (err instanceof SipTransportError) return fail(null, err.message);
    throw err;
  }
  const reason = res.reason || `SIP ${res.status}`;
  if (res.status < 200 || res.status >= 300) {
    const unusable = (res.status === 401 || res.status === 407) && !chooseDigestChallenge(parseDigestChallenges(res.headers.getAll(res.status === 401 ? 'WWW-Authenticate' : 'Proxy-Authenticate')));
    return fail(res.status, unusable ? `${reason} (no supported digest challenge)` : reason);
  }
  // Registered: remove the binding at once. Its outcome is only logged — the
  // credentials are proven either way, and the binding expires in 60 s regardless.
  const remaining = timeoutMs - (Date.now() - started);
  try {
    const un = await reg.exchange(0, { signal: AbortSignal.timeout(Math.max(remaining, UNREGISTER_GRACE_MS)), retryRechallenge: true });
    deps.log?.debug({ status: un.status }, 'sip register: unregistered');
  } catch (err) {
    deps.log?.debug({ error: err instanceof Error ? err.message : String(err) }, 'sip register: unregister failed');
  }
  return { successful: true, statusCode: res.status, reason };
}

export async function registerCheck(input: RegisterCheckInput, deps: RegisterCheckDeps = {}): Promise<RegisterCheckResult> {
  const invalid = validate(input);
  if (invalid) return fail(null, invalid);
  const started = Date.now();
  const timeoutMs = input.timeoutMs ?? DEFAULT_REGISTER_TIMEOUT_MS;
  const signal = AbortSignal.timeout(timeoutMs);
  const log = deps.log;
  const hostname = input.hostname.trim();
  const request = { ...input, hostname };

  let targets: ResolvedTarget[];
  try {
    targets = await withDeadline(signal, resolveTarget(hostname, input.port, input.transport, deps.resolver ? { resolver: deps.resolver } : {}));
  } catch (err) {
    if (err instanceof SipTimeoutError) return fail(null, 'timeout');
    if (err instanceof ResolveError && !err.message.startsWith('could not resolve')) return fail(null, err.message);
    return fail(null, `could not resolve host ${hostname}`);
  }

  // Every address is judged before anything is sent; refused ones are never used.
  const allowed: ResolvedTarget[] = [];
  let refusal: EgressRefusedError | null = null;
  for (const t of targets) {
    const verdict = deps.checkAddress ? deps.checkAddress(t.address) : { allowed: true as const };
    if (verdict.allowed) allowed.push(t);
    else refusal ??= new EgressRefusedError(t.address, verdict.reason);
  }
  log?.debug({ hostname, transport: input.transport, resolved: targets.length, allowed: allowed.length }, 'sip register: resolved');
  if (allowed.length === 0) throw refusal ?? new EgressRefusedError(hostname, 'no address');

  let lastError: SipTransportError | null = null;
  for (const target of allowed) {
    let flow: SipFlow | null = null;
    try {
      flow = await openFlow({
        transport: input.transport,
        target,
        signal,
        servername: hostname,
        ...(deps.tls ? { tls: deps.tls } : {}),
        ...(deps.timers ? { timers: deps.timers } : {}),
      });
      log?.debug({ address: target.address, port: target.port, transport: input.transport }, 'sip register: sending');
      return await checkOne(flow, request, deps, started, timeoutMs);
    } catch (err) {
      if (err instanceof SipTimeoutError) return fail(null, 'timeout');
      if (!(err instanceof SipTransportError)) throw err;
      lastError = err;
      log?.debug({ address: target.address, port: target.port, error: err.message }, 'sip register: transport error');
    } finally {
      flow?.close();
    }
  }
  return fail(null, lastError?.message ?? 'no reachable address');
}
