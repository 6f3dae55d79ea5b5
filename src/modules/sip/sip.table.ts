import type { Timestamp } from '../../db/schema.ts';

export interface SipCredentialTable {
  id: string;
  organization_id: string;
  name: string;
  hostname: string;
  port: number;
  transport: string;
  username: string;
  /** Sealed with the secret box (`enc:v1:…`); never leaves the service. */
  password_sealed: string;
  max_agent_tasks: number;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface SipNumberTable {
  id: string;
  organization_id: string;
  sip_credential_id: string;
  /** E.164, unique per organization. */
  number: string;
  name: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/**
 * The registration of a credential that asks for one: the process holding it (a lease, renewed
 * while it runs, taken over by another process once it runs out) and the state it last saw.
 */
export interface SipRegistrationTable {
  sip_credential_id: string;
  owner: string | null;
  lease_expires_at: Timestamp | null;
  state: string;
  last_status_code: number | null;
  expires_at: Timestamp | null;
  reason: string | null;
  updated_at: Timestamp;
}

declare module '../../db/schema.ts' {
  interface Database {
    sip_credentials: SipCredentialTable;
    sip_numbers: SipNumberTable;
    sip_registrations: SipRegistrationTable;
  }
}
