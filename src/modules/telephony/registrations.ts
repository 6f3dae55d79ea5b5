import type { Context } from '../../context.ts';
import type { Registration, RegistrationState } from '../../sip/registration.ts';
import type { SipTransport } from '../../sip/resolve.ts';
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

  constructor(private readonly telephony: Pick<Telephony, 'endpoint'>, private readonly ctx: Pick<Context, 'db' | 'clock' | 'log' | 'secrets' | 'processId'>) {}

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
    const { kysely } = this.ctx.db;
    const now = this.ctx.clock.now();
    const wanted = await kysely.selectFrom('sip_credentials')
      .select(['id', 'hostname', 'port', 'transport', 'username', 'password_sealed'])
      .where('register', '=', 1).execute();
    const ids = new Set(wanted.map((c) => c.id));
    for (const id of this.#held.keys()) if (!ids.has(id)) await this.#release(id);
    // Rows of credentials deleted or no longer registering, whoever held them.
    const stale = kysely.deleteFrom('sip_registrations');
    await (ids.size ? stale.where('sip_credential_id', 'not in', [...ids]) : stale).execute();
    for (const credential of wanted) {
      if (!(await this.#lease(credential.id, now))) {
        if (this.#held.has(credential.id)) await this.#release(credential.id);
        continue;
      }
      const fingerprint = JSON.stringify([credential.hostname, credential.port, credential.transport, credential.username, credential.password_sealed]);
      const held = this.#held.get(credential.id);
      if (held?.fingerprint === fingerprint) continue;
      if (held) await this.#stop(credential.id);
      const trunk = {
        hostname: credential.hostname, port: credential.port, transport: credential.transport as SipTransport,
        username: credential.username, password: this.ctx.secrets.open(credential.password_sealed),
      };
      const writes = { chain: Promise.resolve() };
      const registration = this.telephony.endpoint.register({
        trunk,
        onState: (state) => {
          writes.chain = writes.chain.then(() => this.#write(credential.id, state))
            .catch((err: unknown) => this.ctx.log.warn({ err, credentialId: credential.id }, 'SIP registration: state not stored'));
        },
      });
      this.#held.set(credential.id, { fingerprint, registration, writes });
      this.ctx.log.info({ credentialId: credential.id, hostname: credential.hostname }, 'SIP registration started');
    }
  }

  /** Takes or renews this process's lease on the credential's registration; false when another process holds it. */
  async #lease(id: string, now: Date): Promise<boolean> {
    const { kysely } = this.ctx.db;
    const at = now.toISOString();
    const until = new Date(now.getTime() + REGISTRATION_LEASE_MS).toISOString();
    await kysely.insertInto('sip_registrations').values({
      sip_credential_id: id, owner: this.ctx.processId, lease_expires_at: until, state: 'registering', last_status_code: null, expires_at: null, updated_at: at,
    }).onConflict((oc) => oc.column('sip_credential_id').doNothing()).execute();
    const taken = await kysely.updateTable('sip_registrations').set({ owner: this.ctx.processId, lease_expires_at: until })
      .where('sip_credential_id', '=', id)
      .where((eb) => eb.or([eb('owner', '=', this.ctx.processId), eb('lease_expires_at', '<=', at)]))
      .executeTakeFirst();
    return Number(taken.numUpdatedRows) === 1;
  }

  async #write(id: string, state: RegistrationState): Promise<void> {
    await this.ctx.db.kysely.updateTable('sip_registrations').set({
      state: state.state, last_status_code: state.lastStatusCode, expires_at: state.expiresAt?.toISOString() ?? null, updated_at: this.ctx.clock.now().toISOString(),
    }).where('sip_credential_id', '=', id).where('owner', '=', this.ctx.processId).execute();
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
    await this.ctx.db.kysely.deleteFrom('sip_registrations').where('sip_credential_id', '=', id).where('owner', '=', this.ctx.processId).execute()
      .catch((err: unknown) => this.ctx.log.warn({ err, credentialId: id }, 'SIP registration: lease not released'));
    this.ctx.log.info({ credentialId: id }, 'SIP registration stopped');
  }
}
