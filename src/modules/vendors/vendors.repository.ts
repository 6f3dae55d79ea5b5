import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database } from '../../db/schema.ts';
import type { VendorTable } from './vendors.table.ts';
import type { Vendor } from './vendors.schemas.ts';

type Executor = Kysely<Database> | Transaction<Database>;

export const VENDORS_COUNTER = 'vendors';

export function toVendor(row: Selectable<VendorTable>): Vendor {
  return { id: row.id, name: row.name, createdAt: row.created_at, updatedAt: row.updated_at };
}

export function findVendor(db: Executor, id: string) {
  return db.selectFrom('vendors').selectAll().where('id', '=', id).executeTakeFirst();
}
