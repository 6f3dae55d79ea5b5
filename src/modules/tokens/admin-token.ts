import type { Db } from '../../db/database.ts';
import { generateAdminToken, hashSecret } from './token-secret.ts';

const SETTING = 'admin_token_hash';

/**
 * The platform admin token's hash. From PARLEY_ADMIN_TOKEN when set; otherwise generated on
 * the first start, handed to `announce` exactly once (by the process that won the insert),
 * and only its hash kept.
 */
export async function ensureAdminTokenHash(
  db: Db,
  fromEnv: string | null,
  announce: (token: string) => void,
): Promise<string> {
  if (fromEnv) return hashSecret(fromEnv);
  const existing = await db.kysely.selectFrom('settings').select('value').where('key', '=', SETTING).executeTakeFirst();
  if (existing) return existing.value;
  const token = generateAdminToken();
  const hash = hashSecret(token);
  await db.kysely
    .insertInto('settings')
    .values({ key: SETTING, value: hash })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
  const stored = await db.kysely.selectFrom('settings').select('value').where('key', '=', SETTING).executeTakeFirstOrThrow();
  if (stored.value === hash) announce(token);
  return stored.value;
}

/** Whether a generated admin token's hash is stored (`parley doctor`; the hash itself is not shown). */
export async function adminTokenStored(db: Db): Promise<boolean> {
  const row = await db.kysely.selectFrom('settings').select('key').where('key', '=', SETTING).executeTakeFirst();
  return row !== undefined;
}
