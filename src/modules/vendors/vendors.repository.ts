import type { Insertable, Selectable } from 'kysely';
import { bumpCounter, readCounter } from '../../db/counters.ts';
import type { Executor } from '../../db/schema.ts';
import { BASE_SORT, fetchPage, type PageQuery } from '../../http/pagination.ts';
import type { VendorTable } from './vendors.table.ts';
import type { Vendor } from './vendors.schemas.ts';

const COUNTER = 'vendors';

export function toVendor(row: Selectable<VendorTable>): Vendor {
  return { id: row.id, name: row.name, createdAt: row.created_at, updatedAt: row.updated_at };
}

export function findVendor(db: Executor, id: string) {
  return db.selectFrom('vendors').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listVendors(db: Executor, query: PageQuery) {
  const page = await fetchPage(db.selectFrom('vendors').selectAll(), query, BASE_SORT, () => readCounter(db, COUNTER));
  return { ...page, items: page.items.map(toVendor) };
}

export async function insertVendor(db: Executor, row: Insertable<VendorTable>): Promise<void> {
  await db.insertInto('vendors').values(row).execute();
  await bumpCounter(db, COUNTER, 1);
}

export async function updateVendorRow(db: Executor, id: string, set: Pick<VendorTable, 'name' | 'updated_at'>): Promise<void> {
  await db.updateTable('vendors').set(set).where('id', '=', id).execute();
}

export async function deleteVendorRow(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('vendors').where('id', '=', id).execute();
  await bumpCounter(db, COUNTER, -1);
}
