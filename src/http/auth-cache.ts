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
 * same. Each request still learns the current epoch, so a revocation made by any process is
 * honoured on the very next request, while the token and tenant lookups are skipped. Learning
 * it is one primary-key read, skipped while the database's change mark (Db.changeMark) is the
 * one the epoch was last read under: no commit at all, by anyone, has happened since.
 * Each app builds its own cache: nothing is shared between app instances.
 */
export class AuthCache<P> {
  private readonly epochQuery: CompiledQuery<{ value: number }>;
  private readonly principals = new Map<string, { principal: P; expiresAt: number | null; epoch: number }>();
  private readonly tenants = new Map<string, number>();
  private lastEpoch: { mark: number; epoch: number } | null = null;

  constructor(private readonly db: Db) {
    this.epochQuery = db.kysely.selectFrom('counters').select('value').where('key', '=', EPOCH_KEY).compile();
  }

  /** The epoch without a read, when nothing was committed since it was read under `mark`. */
  knownEpoch(mark: number | undefined): number | undefined {
    return mark !== undefined && this.lastEpoch?.mark === mark ? this.lastEpoch.epoch : undefined;
  }

  /** Reads the epoch; `mark`, taken before the read, is what it stays known under. */
  async epoch(mark: number | undefined): Promise<number> {
    const rows = await this.db.read(this.epochQuery);
    const epoch = Number(rows[0]?.value ?? 0);
    if (mark !== undefined) this.lastEpoch = { mark, epoch };
    return epoch;
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
