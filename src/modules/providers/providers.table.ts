import type { Timestamp } from '../../db/schema.ts';

/**
 * What `api_key_sealed` holds for a credential without a key (an OpenAI-compatible server that
 * takes none): an absence is no secret, and a sealed value is never empty.
 */
export const NO_KEY = '';

export interface ProviderCredentialTable {
  id: string;
  organization_id: string;
  /** A provider of the registry that takes credentials (src/calls/providers/registry.ts); unique per organization. */
  provider: string;
  /** Sealed with the secret box (`enc:v1:…`); opened only to call the provider or check its signatures. NO_KEY: none. */
  api_key_sealed: string;
  base_url: string | null;
  /** Twilio's Account SID, for twilio credentials that name it. */
  account_sid: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../../db/schema.ts' {
  interface Database {
    provider_credentials: ProviderCredentialTable;
  }
}
