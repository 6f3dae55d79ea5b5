import type { Context } from '../../context.ts';
import type { SipTransport } from '../../sip/resolve.ts';
import type { RegistrationStore } from '../../telephony/directory.ts';

/**
 * The trunk registrations' leases and states in sip_registrations: one row per credential, the
 * lease of the process that registers it and the state the credential's read shape shows.
 */
export function registrationStore(ctx: Pick<Context, 'db' | 'secrets' | 'processId'>): RegistrationStore {
  const { kysely } = ctx.db;
  const owner = ctx.processId;
  return {
    async wanted() {
      const rows = await kysely.selectFrom('sip_credentials')
        .select(['id', 'hostname', 'port', 'transport', 'username', 'password_sealed'])
        .where('register', '=', 1).execute();
      return rows.map((c) => ({
        id: c.id,
        hostname: c.hostname,
        fingerprint: JSON.stringify([c.hostname, c.port, c.transport, c.username, c.password_sealed]),
        trunk: () => ({ hostname: c.hostname, port: c.port, transport: c.transport as SipTransport, username: c.username, password: ctx.secrets.open(c.password_sealed) }),
      }));
    },

    async dropStale(keep) {
      const stale = kysely.deleteFrom('sip_registrations');
      await (keep.length ? stale.where('sip_credential_id', 'not in', [...keep]) : stale).execute();
    },

    async lease(id, now, until) {
      const at = now.toISOString();
      const expires = until.toISOString();
      await kysely.insertInto('sip_registrations').values({
        sip_credential_id: id, owner, lease_expires_at: expires, state: 'registering', last_status_code: null, expires_at: null, updated_at: at,
      }).onConflict((oc) => oc.column('sip_credential_id').doNothing()).execute();
      const taken = await kysely.updateTable('sip_registrations').set({ owner, lease_expires_at: expires })
        .where('sip_credential_id', '=', id)
        .where((eb) => eb.or([eb('owner', '=', owner), eb('lease_expires_at', '<=', at)]))
        .executeTakeFirst();
      return Number(taken.numUpdatedRows) === 1;
    },

    async write(id, state, now) {
      await kysely.updateTable('sip_registrations').set({
        state: state.state, last_status_code: state.lastStatusCode, expires_at: state.expiresAt?.toISOString() ?? null, updated_at: now.toISOString(),
      }).where('sip_credential_id', '=', id).where('owner', '=', owner).execute();
    },

    async release(id) {
      await kysely.deleteFrom('sip_registrations').where('sip_credential_id', '=', id).where('owner', '=', owner).execute();
    },
  };
}
