import type { CompiledQuery, Kysely, Transaction } from 'kysely';
import { bumpCounter } from '../db/counters.ts';
import type { Database } from '../db/schema.ts';
import type { Db } from '../db/database.ts';

const EPOCH_KEY = 'auth_epoch';
const MAX_ENTRIES = 10_000;

/**
 * Anything that can turn a token away or make a tenant vanish (revoking a token, deleting an
 * organization or vendor) bumps the auth epoch in the same transaction.
 */
export function bumpAuthEpoch(trx: Kysely<Database> | Transaction<Database>): Promise<void> {
  return bumpCounter(trx, EPOCH_KEY, 1);
}

/**
 * Remembers authenticated tokens and existing tenants for as long as the auth epoch stays the
 * same. Each request still reads the epoch, one primary-key read, so a revocation made by any
 * process is honoured on the very next request, while the token and tenant lookups are skipped.
 * Each app builds its own cache: nothing is shared between app instances.
 */
export class AuthCache<P> {
  private readonly epochQuery: CompiledQuery<{ value: number }>;
  private readonly principals = new Map<string, { principal: P; expiresAt: number | null; epoch: number }>();
  private readonly tenants = new Map<string, number>();

  constructor(private readonly db: Db) {
    this.epochQuery = db.kysely.selectFrom('counters').select('value').where('key', '=', EPOCH_KEY).compile();
  }

  async epoch(): Promise<number> {
    const rows = await this.db.read(this.epochQuery);
    return Number(rows[0]?.value ?? 0);
  }

  /** `now` in epoch milliseconds: expiry is compared as an instant, never as text. */
  principal(token: string, epoch: number, now: number): P | undefined {
    const entry = this.principals.get(token);
    if (!entry || entry.epoch !== epoch || (entry.expiresAt !== null && entry.expiresAt <= now)) return undefined;
    return entry.principal;
  }

  rememberPrincipal(token: string, principal: P, expiresAt: string | null, epoch: number): void {
    remember(this.principals, token, { principal, expiresAt: expiresAt === null ? null : Date.parse(expiresAt), epoch });
  }

  tenantKnown(key: string, epoch: number): boolean {
    return this.tenants.get(key) === epoch;
  }

  rememberTenant(key: string, epoch: number): void {
    remember(this.tenants, key, epoch);
  }
}

function remember<V>(map: Map<string, V>, key: string, value: V): void {
  if (map.size >= MAX_ENTRIES && !map.has(key)) map.delete(map.keys().next().value as string);
  map.set(key, value);
}
