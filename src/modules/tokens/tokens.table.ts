import type { Json, Timestamp } from '../../db/schema.ts';

export interface ApiTokenTable {
  id: string;
  vendor_id: string;
  organization_id: string | null;
  name: string;
  role: string | null;
  permissions: Json;
  public_id: string;
  secret_hash: string;
  created_at: Timestamp;
  updated_at: Timestamp;
  expires_at: Timestamp | null;
  revoked_at: Timestamp | null;
  /** The token that minted this one (null: the platform admin or the CLI). */
  created_by: string | null;
}

declare module '../../db/schema.ts' {
  interface Database {
    api_tokens: ApiTokenTable;
  }
}
