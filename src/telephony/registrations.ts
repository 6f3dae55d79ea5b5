import type { Context } from '../context.ts';
import type { Registration } from '../sip/registration.ts';
import type { RegistrationStore } from './directory.ts';
import type { Telephony } from './telephony.ts';

/** How long a process's claim on a credential's registration lasts unless renewed. */
export const REGISTRATION_LEASE_MS = 30_000;
/** How often a process looks for credentials to register (and renews its leases). */
export const REGISTRATION_SYNC_MS = 10_000;

interface Held {
  /** What the registration was started with; another means the credentials changed: restart. */
  fingerprint: string;
  registration: Registration;
  /** The state rows, written one after another in the order the states came. */
  writes: { chain: Promise<void> };
}

/**
 * Keeps a registration up for every SIP credential with `register` set, one process per
 * credential: a row in sip_registrations is the lease (taken when free or run out, renewed on
 * each sync) and the status the credential's read shape shows. Changes to credentials take
 * effect at the next sync, at once in the process that made them (`sync()` is called after
 * every write), within REGISTRATION_SYNC_MS in the others; a process that stops renewing
 * hands its credentials over after REGISTRATION_LEASE_MS.
 */
export class TrunkRegistrations {
  readonly #held = new Map<string, Held>();
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> = Promise.resolve();
  #again = false;
  #closed = false;

  constructor(
    private readonly telephony: Pick<Telephony, 'endpoint'>,
    private readonly store: RegistrationStore,
    private readonly ctx: Pick<Context, 'clock' | 'log'>,
  ) {}

  start(): void {
    void this.sync();
    this.#timer = setInterval(() => void this.sync(), REGISTRATION_SYNC_MS);
    this.#timer.unref();
  }

  /** Runs a sync now, or right after the one under way (never two at once). */
  sync(): Promise<void> {
    if (this.#closed) return this.#running;
    this.#again = true;
    this.#running = this.#running.then(async () => {
      if (!this.#again || this.#closed) return;
      this.#again = false;
      await this.#syncOnce().catch((err: unknown) => this.ctx.log.error({ err }, 'SIP registrations: sync failed'));
    });
    return this.#running;
  }

  /** Un-registers every credential this process registers and gives up the leases. */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    await this.#running;
    await Promise.all([...this.#held.keys()].map((id) => this.#release(id)));
  }

  async #syncOnce(): Promise<void> {
    const now = this.ctx.clock.now();
    const wanted = await this.store.wanted();
    const ids = new Set(wanted.map((c) => c.id));
    for (const id of this.#held.keys()) if (!ids.has(id)) await this.#release(id);
    await this.store.dropStale([...ids]);
    for (const credential of wanted) {
      if (!(await this.store.lease(credential.id, now, new Date(now.getTime() + REGISTRATION_LEASE_MS)))) {
        if (this.#held.has(credential.id)) await this.#release(credential.id);
        continue;
      }
      const { fingerprint } = credential;
      const held = this.#held.get(credential.id);
      if (held?.fingerprint === fingerprint) continue;
      if (held) await this.#stop(credential.id);
      const writes = { chain: Promise.resolve() };
      const registration = this.telephony.endpoint.register({
        trunk: credential.trunk(),
        onState: (state) => {
          writes.chain = writes.chain.then(() => this.store.write(credential.id, state, this.ctx.clock.now()))
            .catch((err: unknown) => this.ctx.log.warn({ err, credentialId: credential.id }, 'SIP registration: state not stored'));
        },
      });
      this.#held.set(credential.id, { fingerprint, registration, writes });
      this.ctx.log.info({ credentialId: credential.id, hostname: credential.hostname }, 'SIP registration started');
    }
  }

  /** Stops the registration (un-REGISTER) and waits for its last state to be stored. */
  async #stop(id: string): Promise<void> {
    const held = this.#held.get(id);
    if (!held) return;
    this.#held.delete(id);
    await held.registration.stop();
    await held.writes.chain;
  }

  async #release(id: string): Promise<void> {
    await this.#stop(id);
    await this.store.release(id).catch((err: unknown) => this.ctx.log.warn({ err, credentialId: id }, 'SIP registration: lease not released'));
    this.ctx.log.info({ credentialId: id }, 'SIP registration stopped');
  }
}
