import type { FastifyBaseLogger } from 'fastify';
import type { Context } from '../../context.ts';
import { MASK } from '../../crypto/secret-box.ts';
import { badRequest, conflict, notFound } from '../../http/errors.ts';
import type { Edit } from '../../http/updates.ts';
import {
  deleteSipCredentialRow, findSipCredential, insertSipCredential, readSipCredential, registrationOf, toSipCredential, updateSipCredentialRow,
} from './sip-credentials.repository.ts';
import type { SipCredential, SipCredentialCreate, SipCredentialUpdate, SipTransportName } from './sip-credentials.schemas.ts';
import { firstNumberOf, numbersOf } from './sip-numbers.repository.ts';
import { assertNumberUnclaimed, trunkAddress } from './number-claims.ts';
import { assertHostname, portOf, validateSipTarget } from './sip-validate.ts';

type Deps = Pick<Context, 'db' | 'clock' | 'secrets' | 'egress'>;
const NAME = 'SIP credentials';

async function load({ db }: Deps, organizationId: string, id: string) {
  const row = await findSipCredential(db.kysely, organizationId, id);
  if (!row) throw notFound(NAME);
  return row;
}

export async function createSipCredential({ db, clock, secrets }: Deps, organizationId: string, body: SipCredentialCreate): Promise<SipCredential> {
  assertHostname(body.hostname);
  const at = clock.now().toISOString();
  const row = {
    id: crypto.randomUUID(),
    organization_id: organizationId,
    name: body.name,
    hostname: body.hostname,
    port: portOf(body),
    transport: body.transport ?? 'udp',
    username: body.username,
    password_sealed: secrets.seal(body.password),
    max_agent_tasks: body.maxAgentTasks ?? 1,
    register: body.register ? 1 : 0,
    created_at: at,
    updated_at: at,
  };
  await db.kysely.transaction().execute((trx) => insertSipCredential(trx, row));
  return toSipCredential(row, registrationOf(body.register ?? false, undefined, clock.now()));
}

export async function getSipCredential(deps: Deps, organizationId: string, id: string): Promise<SipCredential> {
  return readSipCredential(deps.db.kysely, await load(deps, organizationId, id), deps.clock.now());
}

/**
 * A body without `password` (or with the mask) keeps the stored one, but only towards the server
 * it was given for: a new host, port or transport needs it again, else an editor could point the
 * digest at a server of their own.
 */
export async function updateSipCredential(deps: Deps, organizationId: string, id: string, edit: Edit<SipCredential, SipCredentialUpdate>): Promise<void> {
  const stored = await load(deps, organizationId, id);
  const body = edit(await readSipCredential(deps.db.kysely, stored, deps.clock.now()));
  assertHostname(body.hostname);
  const transport = body.transport ?? 'udp';
  const keepPassword = body.password === undefined || body.password === MASK;
  if (keepPassword && (stored.hostname !== body.hostname || stored.port !== portOf(body) || stored.transport !== transport)) {
    throw badRequest('Send the password again', [{ path: 'password', message: 'must be sent again: hostname, port or transport changed, and a kept password never follows a new server' }]);
  }
  await deps.db.kysely.transaction().execute(async (trx) => {
    // Pointing credentials at another host moves their numbers' claims there: each must be free.
    if (trunkAddress(stored.hostname) !== trunkAddress(body.hostname)) {
      for (const { number } of await numbersOf(trx, id)) await assertNumberUnclaimed(trx, deps.db.dialect, organizationId, number, body.hostname);
    }
    await updateSipCredentialRow(trx, organizationId, id, {
      name: body.name,
      hostname: body.hostname,
      port: portOf(body),
      transport,
      username: body.username,
      ...(keepPassword ? {} : { password_sealed: deps.secrets.seal(body.password as string) }),
      max_agent_tasks: body.maxAgentTasks ?? 1,
      register: body.register ? 1 : 0,
      updated_at: deps.clock.now().toISOString(),
    });
  });
}

/** 409 while a SIP number uses the credentials. */
export async function deleteSipCredential({ db }: Deps, organizationId: string, id: string): Promise<void> {
  await db.kysely.transaction().execute(async (trx) => {
    if (!(await findSipCredential(trx, organizationId, id))) throw notFound(NAME);
    const user = await firstNumberOf(trx, id);
    if (user) throw conflict(`The SIP number ${user.number} uses these credentials`);
    await deleteSipCredentialRow(trx, organizationId, id);
  });
}

/** Validates stored credentials as the validate route does given ones: one REGISTER, nothing stored. */
export async function validateStoredSipCredential(deps: Deps, log: FastifyBaseLogger, organizationId: string, id: string) {
  const row = await load(deps, organizationId, id);
  const target = {
    hostname: row.hostname,
    port: row.port,
    transport: row.transport as SipTransportName,
    username: row.username,
    password: deps.secrets.open(row.password_sealed),
  };
  return validateSipTarget(target, { allow: deps.egress.allow, log });
}
