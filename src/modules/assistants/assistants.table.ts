import type { Json, Timestamp } from '../../db/schema.ts';

export interface AssistantTable {
  id: string;
  organization_id: string;
  kind: string;
  name: string;
  system_prompt: string | null;
  system_prompt_greeting: string | null;
  strategy_id: string | null;
  telephone_number_id: string | null;
  extensions: Json;
  call_event_hooks: Json;
  /** `{ enabled }`; null: not recorded. */
  recording: Json | null;
  /** The after-call analysis (`AnalysisSetting`); null: none. */
  analysis: Json | null;
  version: number;
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../../db/schema.ts' {
  interface Database {
    assistants: AssistantTable;
  }
}
