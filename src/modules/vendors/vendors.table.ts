import type { Timestamp } from '../../db/schema.ts';

export interface VendorTable {
  id: string;
  name: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../../db/schema.ts' {
  interface Database {
    vendors: VendorTable;
  }
}
