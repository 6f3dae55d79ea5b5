import type { Json, Timestamp } from '../../db/schema.ts';

export interface StrategyTable {
  id: string;
  organization_id: string;
  name: string;
  type: string;
  parameters: Json;
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../../db/schema.ts' {
  interface Database {
    llm_strategies: StrategyTable;
  }
}
