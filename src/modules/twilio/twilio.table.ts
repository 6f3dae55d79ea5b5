import type { Timestamp } from '../../db/schema.ts';

/** A CallSid an organization's voice webhook has answered (replays of it are refused). */
export interface TwilioCallSidTable {
  organization_id: string;
  call_sid: string;
  received_at: Timestamp;
}

declare module '../../db/schema.ts' {
  interface Database {
    twilio_call_sids: TwilioCallSidTable;
  }
}
