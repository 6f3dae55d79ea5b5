import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database, OrganizationTable } from '../../db/schema.ts';
import type { Organization } from './organizations.schemas.ts';

type Executor = Kysely<Database> | Transaction<Database>;

export const orgCounter = (vendorId: string) => `organizations:${vendorId}`;

export function toOrganization(row: Selectable<OrganizationTable>): Organization {
  return { id: row.id, vendorId: row.vendor_id, name: row.name, createdAt: row.created_at, updatedAt: row.updated_at };
}

export function findOrganization(db: Executor, vendorId: string, id: string) {
  return db.selectFrom('organizations').selectAll().where('vendor_id', '=', vendorId).where('id', '=', id).executeTakeFirst();
}

/**
 * Tables whose rows belong to an organization and block its deletion (409) while any exist.
 * Feature modules add theirs; API tokens are not here because they go with the organization.
 */
export const organizationDependents: { table: keyof Database; label: string }[] = [
  { table: 'agent_tasks', label: 'agent tasks' },
  { table: 'assistants', label: 'assistants or agents' },
  { table: 'llm_strategies', label: 'LLM generation strategies' },
];
