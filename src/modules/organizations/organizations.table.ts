import type { Timestamp } from '../../db/schema.ts';

export interface OrganizationTable {
  id: string;
  vendor_id: string;
  name: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../../db/schema.ts' {
  interface Database {
    organizations: OrganizationTable;
  }
}
