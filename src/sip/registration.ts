// A registration that stays up (RFC 3261 §10): REGISTER with the trunk's account,
// refreshed at half the granted lifetime, retried with backoff after a failure, and
// removed (Expires: 0) on stop(). Our Contact is the endpoint itself, so INVITEs the
// registrar routes to it reach onInvite.
import { DigestSession } from './auth.ts';
import type { SipCore } from './core.ts';
import { splitHeaderList } from './message.ts';
import type { SipResponse } from './message.ts';
import { newRequest, token } from './requests.ts';
import { resolveTrunk } from './target.ts';
import type { Trunk } from './target.ts';
import { escapeUser, formatHost, parseNameAddr } from './uri.ts';

export interface RegistrationState {
  state: 'registered' | 'registering' | 'failed' | 'unregistered';
  lastStatusCode: number | null;
  /** When the binding runs out unless refreshed; null when there is none. */
  expiresAt: Date | null;
  reason: string;
}

export interface RegistrationOptions {
  trunk: Trunk;
  /** Lifetime asked for, in seconds (the registrar may grant less or more). Default 300. */
  expires?: number;
  /** User part of our Contact; default the trunk username. */
  contactUser?: string;
  onState?: (state: RegistrationState) => void;
  /** Waits after failures: the first, doubling up to the cap (ms). Default 2 s to 5 min. */
  retry?: { initialMs?: number; maxMs?: number };
}

const MAX_MIN_EXPIRES = 86_400;

export class Registration {
  #state: RegistrationState = { state: 'registering', lastStatusCode: null, expiresAt: null, reason: '' };
  readonly #callId = `${token(12)}@parley`;
  readonly #fromTag = token(6);
  #seq = 0;
  #expires: number;
  readonly #credentials: DigestSession;
  #timer: NodeJS.Timeout | undefined;
  #failures = 0;
  #stopped = false;
  #inFlight: Promise<void> = Promise.resolve();

  constructor(private readonly core: SipCore, private readonly options: RegistrationOptions, private readonly onStopped: () => void = () => undefined) {
    this.#expires = options.expires ?? 300;
    this.#credentials = new DigestSession({ username: options.trunk.username, password: options.trunk.password });
    this.#run();
  }

  get state(): RegistrationState {
    return { ...this.#state };
  }

  /** Stops refreshing and removes the binding (when there is one). */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#inFlight;
    if (this.#state.state === 'registered') {
      await this.#exchange(0).catch((err: unknown) => this.core.log.debug({ err: (err as Error).message }, 'sip: un-REGISTER failed'));
    }
    this.#set({ state: 'unregistered', lastStatusCode: this.#state.lastStatusCode, expiresAt: null, reason: 'stopped' });
    this.onStopped();
  }

  #set(state: RegistrationState): void {
    this.#state = state;
    this.options.onState?.({ ...state });
  }

  #run(): void {
    this.#inFlight = this.#attempt().catch((err: unknown) => this.#failed(null, (err as Error).message));
  }

  async #attempt(): Promise<void> {
    if (this.#state.state !== 'registered') this.#set({ ...this.#state, state: 'registering' });
    const res = await this.#exchange(this.#expires);
    if (this.#stopped && res.status >= 300) return;
    if (res.status < 200 || res.status >= 300) return this.#failed(res.status, res.reason);
    const granted = this.#granted(res);
    if (granted <= 0) return this.#failed(res.status, 'the registrar kept no binding');
    this.#failures = 0;
    this.#set({ state: 'registered', lastStatusCode: res.status, expiresAt: new Date(this.core.clock.now().getTime() + granted * 1000), reason: res.reason });
    if (!this.#stopped) this.#schedule(Math.max(granted * 500, 500));
  }

  #failed(status: number | null, reason: string): void {
    this.#failures += 1;
    this.#set({ state: 'failed', lastStatusCode: status, expiresAt: this.#state.expiresAt, reason });
    const first = this.options.retry?.initialMs ?? 2000;
    const cap = this.options.retry?.maxMs ?? 300_000;
    if (!this.#stopped) this.#schedule(Math.min(first * 2 ** (this.#failures - 1), cap));
  }

  #schedule(ms: number): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#run(), ms);
  }

  /** One REGISTER to its final answer: a digest challenge and a 423 are each answered once. */
  async #exchange(expires: number): Promise<SipResponse> {
    const { trunk } = this.options;
    const [hop] = await resolveTrunk(trunk, this.core.policy);
    if (!hop) throw new Error('no address for the registrar');
    const host = formatHost(trunk.hostname.trim());
    const uri = `sip:${host}${trunk.port ? `:${trunk.port}` : ''}${trunk.transport === 'udp' ? '' : `;transport=${trunk.transport}`}`;
    const aor = `<sip:${escapeUser(trunk.username)}@${host}>`;
    let intervalRetried = false;
    const round = this.#credentials.round();
    for (let attempt = 0; attempt < 4; attempt++) {
      const req = newRequest('REGISTER', uri, [
        ['From', `${aor};tag=${this.#fromTag}`],
        ['To', aor],
        ['Call-ID', this.#callId],
        ['CSeq', `${++this.#seq} REGISTER`],
        ['Contact', this.core.contact(this.options.contactUser ?? trunk.username, hop.transport)],
        ['Expires', String(expires)],
      ]);
      round.authorize(req);
      const res = await this.core.transactions.request(this.core.stamp(req, hop), hop);
      if (round.challenged(res)) continue;
      const min = Number(res.headers.get('Min-Expires'));
      if (res.status === 423 && !intervalRetried && Number.isInteger(min) && min > expires && min <= MAX_MIN_EXPIRES) {
        intervalRetried = true;
        this.#expires = expires = min;
        continue;
      }
      return res;
    }
    throw new Error('the registrar kept challenging');
  }

  /** The lifetime granted to our Contact: its expires parameter, else the Expires header. */
  #granted(res: SipResponse): number {
    const ours = `${formatHost(this.core.advertised.host)}:${this.core.advertised.port}`.toLowerCase();
    for (const value of res.headers.getAll('Contact').flatMap(splitHeaderList)) {
      try {
        const contact = parseNameAddr(value);
        if (`${formatHost(contact.uri.host)}:${contact.uri.port ?? 5060}`.toLowerCase() !== ours) continue;
        const expires = Number(contact.params.get('expires'));
        if (Number.isFinite(expires)) return expires;
      } catch {
        // Another binding's Contact we cannot read is not ours.
      }
    }
    const header = Number(res.headers.get('Expires'));
    return Number.isFinite(header) && res.headers.has('Expires') ? header : this.#expires;
  }
}
