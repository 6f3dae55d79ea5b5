import type { Context } from '../../context.ts';
import { narrowedTo, type Principal } from '../../http/auth.ts';
import { bumpAuthEpoch } from '../../http/auth-cache.ts';
import { conflict, forbidden, notFound } from '../../http/errors.ts';
import type { Edit } from '../../http/updates.ts';
import { deleteOrganizationTokens } from '../tokens/tokens.repository.ts';
import {
  deleteOrganizationRow, findOrganization, firstDependent, insertOrganization, toOrganization, updateOrganizationRow, type OrganizationDependent,
} from './organizations.repository.ts';
import type { Organization, OrganizationWrite } from './organizations.schemas.ts';

type Deps = Pick<Context, 'db' | 'clock'>;


export async function createOrganization({ db, clock }: Deps, principal: Principal | null, vendorId: string, body: OrganizationWrite): Promise<Organization> {
  if (narrowedTo(principal)) throw forbidden('An organization token cannot create organizations');
  const at = clock.now().toISOString();
  const row = { id: crypto.randomUUID(), vendor_id: vendorId, name: body.name, created_at: at, updated_at: at };
  await db.kysely.transaction().execute((trx) => insertOrganization(trx, row));
  return toOrganization(row);
}

export async function getOrganization({ db }: Deps, vendorId: string, id: string): Promise<Organization> {
  const row = await findOrganization(db.kysely, vendorId, id);
  if (!row) throw notFound('Organization');
  return toOrganization(row);
}

export async function updateOrganization(deps: Deps, vendorId: string, id: string, edit: Edit<Organization, OrganizationWrite>): Promise<void> {
  const body = edit(await getOrganization(deps, vendorId, id));
  await updateOrganizationRow(deps.db.kysely, vendorId, id, { name: body.name, updated_at: deps.clock.now().toISOString() });
}

/** 409 while the organization holds resources; its API tokens go with it, and stop working at once. */
export async function deleteOrganization({ db }: Deps, vendorId: string, id: string, dependents: readonly OrganizationDependent[]): Promise<void> {
  await db.kysely.transaction().execute(async (trx) => {
    const blocking = await firstDependent(trx, id, dependents);
    if (blocking) throw conflict(`Organization still has ${blocking.label}; delete them first`);
    await deleteOrganizationTokens(trx, vendorId, id);
    await deleteOrganizationRow(trx, vendorId, id);
    await bumpAuthEpoch(trx);
  });
}
