import type { Kysely, Selectable, Transaction } from 'kysely';
import { MASK } from '../../crypto/secret-box.ts';
import type { Database } from '../../db/schema.ts';
import { NO_KEY, type ProviderCredentialTable } from './providers.table.ts';
import type { ProviderCredential, ProviderName } from './providers.schemas.ts';

type Executor = Kysely<Database> | Transaction<Database>;

export const providerCredentialCounter = (organizationId: string) => `provider_credentials:${organizationId}`;

/** The read shape: the key is the mask, always. */
export function toProviderCredential(row: Selectable<ProviderCredentialTable>): ProviderCredential {
  return {
    id: row.id,
    organizationId: row.organization_id,
    provider: row.provider as ProviderName,
    apiKey: row.api_key_sealed === NO_KEY ? null : MASK,
    baseUrl: row.base_url,
    accountSid: row.account_sid,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function findProviderCredential(db: Executor, organizationId: string, id: string) {
  return db
    .selectFrom('provider_credentials')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** The organization's credential for one provider (there is at most one). */
export function findCredentialOfProvider(db: Executor, organizationId: string, provider: ProviderName) {
  return db
    .selectFrom('provider_credentials')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('provider', '=', provider)
    .executeTakeFirst();
}
