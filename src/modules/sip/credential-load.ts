import { sql, type RawBuilder } from 'kysely';

/** Any constant, the same in every process: held by task claims and by incoming calls while they count a credential's load. */
export const CREDENTIAL_LOCK = 0x7461736b;

/**
 * What counts against a SIP credential's `maxAgentTasks`, in one place: its agent tasks in
 * progress (ringing or talking) and the live calls it took in (a task's own call is counted by
 * its task). The task claim compares it with the cap under the claim lock, and so does an
 * incoming call before it is answered, so the cap holds across processes and directions.
 */
export function credentialLoad(credentialId: RawBuilder<unknown>): RawBuilder<number> {
  return sql<number>`((select count(*) from agent_tasks load_t where load_t.status = 'IN_PROGRESS' and load_t.sip_credential_id = ${credentialId})
    + (select count(*) from calls load_c where load_c.sip_credential_id = ${credentialId} and load_c.task_id is null and load_c.status in ('ringing', 'active')))`;
}
