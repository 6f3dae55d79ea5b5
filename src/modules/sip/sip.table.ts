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

declare module '../../db/schema.ts' {
  interface Database {
    sip_credentials: SipCredentialTable;
    sip_numbers: SipNumberTable;
  }
}
