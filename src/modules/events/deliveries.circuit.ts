import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema.ts';

/**
 * Circuit breaking per webhook endpoint (URL origin): after THRESHOLD failures in a row that say
 * the endpoint itself is unwell (no answer, a timeout, a 5xx, a 429), its deliveries wait for
 * an open period that doubles with each further failure, from 30 s up to 10 min, instead of
 * taking delivery slots. The first attempt after the period is the probe; a 2xx, or any answer
 * that shows the endpoint alive (a 4xx), closes the circuit.
 */
export const CIRCUIT = { threshold: 5, baseMs: 30_000, capMs: 10 * 60_000 } as const;

const endpointUnwell = (statusCode: number | null) => statusCode === null || statusCode >= 500 || statusCode === 429;

/** Records an attempt's result for its endpoint; answers until when the circuit is open, if it is. */
export async function noteEndpointResult(trx: Transaction<Database>, endpoint: string, statusCode: number | null, now: Date): Promise<Date | null> {
  const at = now.toISOString();
  if (!endpointUnwell(statusCode)) {
    await trx.deleteFrom('webhook_endpoints').where('endpoint', '=', endpoint).execute();
    return null;
  }
  // The count goes up in one statement: concurrent attempts to one endpoint must not lose a reset or a failure.
  const row = await trx.insertInto('webhook_endpoints').values({ endpoint, failures: 1, open_until: null, updated_at: at })
    .onConflict((oc) => oc.column('endpoint').doUpdateSet((eb) => ({ failures: eb('webhook_endpoints.failures', '+', 1), updated_at: at })))
    .returning('failures').executeTakeFirstOrThrow();
  const failures = Number(row.failures);
  const open = failures >= CIRCUIT.threshold
    ? new Date(now.getTime() + Math.min(CIRCUIT.capMs, CIRCUIT.baseMs * 2 ** (failures - CIRCUIT.threshold))).toISOString()
    : null;
  if (open) await trx.updateTable('webhook_endpoints').set({ open_until: open }).where('endpoint', '=', endpoint).where('failures', '=', failures).execute();
  return open === null ? null : new Date(open);
}

/** The origin a hook URL is delivered to: the unit of fairness and circuit breaking. */
export function endpointOf(url: string): string {
  return URL.parse(url)?.origin ?? '';
}
