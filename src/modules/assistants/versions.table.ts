import type { Json, Timestamp } from '../../db/schema.ts';

/** One immutable version of an assistant or agent: its configuration as stored after a change. */
export interface AssistantVersionTable {
  assistant_id: string;
  /** 1, 2, 3… per assistant: the assistant row's `version` once this change was written. */
  number: number;
  organization_id: string;
  kind: string;
  /** The row's configuration columns (everything but identity and bookkeeping), secrets sealed. */
  configuration: Json;
  /** The fields of the read shape this change made different (JSON array of names). */
  changes: Json;
  summary: string;
  /** A restore: the version it brought back. */
  restored_from: number | null;
  /** The API token that made it; null for the platform admin token and for the version recorded at the upgrade. */
  token_id: string | null;
  token_name: string | null;
  created_at: Timestamp;
}

declare module '../../db/schema.ts' {
  interface Database {
    assistant_versions: AssistantVersionTable;
  }
}
