import type { Context } from '../../context.ts';
import { bumpAuthEpoch } from '../../http/auth-cache.ts';
import { conflict, notFound } from '../../http/errors.ts';
import type { Edit } from '../../http/updates.ts';
import { hasOrganizations } from '../organizations/organizations.repository.ts';
import { deleteVendorRow, findVendor, insertVendor, toVendor, updateVendorRow } from './vendors.repository.ts';
import type { Vendor, VendorWrite } from './vendors.schemas.ts';

type Deps = Pick<Context, 'db' | 'clock'>;

export async function createVendor({ db, clock }: Deps, body: VendorWrite): Promise<Vendor> {
  const at = clock.now().toISOString();
  const row = { id: crypto.randomUUID(), name: body.name, created_at: at, updated_at: at };
  await db.kysely.transaction().execute((trx) => insertVendor(trx, row));
  return toVendor(row);
}

export async function getVendor({ db }: Deps, id: string): Promise<Vendor> {
  const row = await findVendor(db.kysely, id);
  if (!row) throw notFound('Vendor');
  return toVendor(row);
}

export async function updateVendor({ db, clock }: Deps, id: string, edit: Edit<Vendor, VendorWrite>): Promise<void> {
  const body = edit(await getVendor({ db, clock }, id));
  await updateVendorRow(db.kysely, id, { name: body.name, updated_at: clock.now().toISOString() });
}

/** A vendor goes only once its organizations are gone; the tokens of its callers stop working at once. */
export async function deleteVendor({ db }: Deps, id: string): Promise<void> {
  await db.kysely.transaction().execute(async (trx) => {
    if (!(await findVendor(trx, id))) throw notFound('Vendor');
    if (await hasOrganizations(trx, id)) throw conflict('Vendor still has organizations; delete them first');
    await deleteVendorRow(trx, id);
    await bumpAuthEpoch(trx);
  });
}
