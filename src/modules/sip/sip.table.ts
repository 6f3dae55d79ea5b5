import type { Bool, Timestamp } from '../../db/schema.ts';

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
  /** Keep a registration up with these credentials (one process at a time, see sip_registrations). */
  register: Bool;
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

/** The registration of credentials that ask for one: which process holds it (a lease) and how it stands. */
export interface SipRegistrationTable {
  sip_credential_id: string;
  /** The process id registering; others leave the credentials alone until the lease runs out. */
  owner: string;
  lease_expires_at: Timestamp;
  state: string;
  last_status_code: number | null;
  /** When the registrar's binding runs out unless refreshed. */
  expires_at: Timestamp | null;
  updated_at: Timestamp;
}

declare module '../../db/schema.ts' {
  interface Database {
    sip_credentials: SipCredentialTable;
    sip_numbers: SipNumberTable;
    sip_registrations: SipRegistrationTable;
  }
}
