import { existsSync } from 'node:fs';
import { Command } from 'commander';
import { PROVIDER_VARIABLES } from '../calls/providers/registry.ts';
import { inspectConfig, type Config } from '../config.ts';
import { openDatabase, ping, type Db } from '../db/database.ts';
import { migrationState } from '../db/migrate.ts';
import { describeAdminToken, describeDatabase, describeEgress, describeSecretKey, type Check } from '../diagnostics.ts';
import { llmCheck, sttCheck, ttsCheck } from '../diagnostics-providers.ts';
import { adminTokenStored } from '../modules/tokens/admin-token.ts';
import { describeError, type CliIo, type Outcome } from './io.ts';

const TIMEOUT_MS = 5_000;

function withTimeout<T>(work: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${TIMEOUT_MS / 1000} s`)), TIMEOUT_MS);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** The checks that need the database: it answers, its migrations, the stored admin token. */
async function databaseChecks(config: Config): Promise<{ checks: Check[]; migrated: boolean }> {
  const where = describeDatabase(config.database);
  const { database } = config;
  if (database.dialect === 'sqlite' && database.filename !== ':memory:' && !existsSync(database.filename)) {
    return {
      checks: [
        { name: 'database', status: 'warn', detail: `${where} does not exist yet: parley serve (or parley migrate) creates it` },
        { name: 'admin token', status: 'ok', detail: describeAdminToken(config.adminToken ? 'env' : 'none') },
      ],
      migrated: false,
    };
  }
  let db: Db | undefined;
  try {
    db = openDatabase(database, { poolSize: 1 });
    await withTimeout(ping(db), 'the database');
  } catch (err) {
    await db?.close().catch(() => undefined);
    return { checks: [{ name: 'database', status: 'fail', detail: `${where}: ${describeError(err)}` }], migrated: false };
  }
  try {
    const state = await migrationState(db);
    const migrations: Check = state.unknown.length
      ? { name: 'migrations', status: 'fail', detail: `applied by a newer Parley, unknown to this one: ${state.unknown.join(', ')}` }
      : state.pending.length
        ? { name: 'migrations', status: 'warn', detail: `${state.pending.length} pending (${state.pending.join(', ')}): parley serve or parley migrate applies them` }
        : { name: 'migrations', status: 'ok', detail: `all ${state.applied.length} applied` };
    const stored = state.applied.length ? await adminTokenStored(db) : false;
    return {
      checks: [
        { name: 'database', status: 'ok', detail: `${where} answers` },
        migrations,
        { name: 'admin token', status: 'ok', detail: describeAdminToken(config.adminToken ? 'env' : stored ? 'stored' : 'none') },
      ],
      migrated: state.applied.length > 0,
    };
  } finally {
    await db.close();
  }
}

function secretKeyCheck(config: Config, migrated: boolean): Check {
  const source = config.secretKeySource;
  if (source.kind !== 'file' || existsSync(source.path)) return { name: 'secret key', status: 'ok', detail: describeSecretKey(source) };
  const stored = migrated ? '; anything sealed with an earlier key (tool headers, hook secrets, provider keys) cannot be read without it' : '';
  return { name: 'secret key', status: migrated ? 'warn' : 'ok', detail: `${source.path} does not exist yet: parley serve generates it beside the database${stored}` };
}

/** Every check in order; `parley doctor` prints them and fails when one failed. */
export async function runChecks(env: CliIo['env']): Promise<Check[]> {
  let config: Config;
  try {
    config = inspectConfig(env, PROVIDER_VARIABLES);
  } catch (err) {
    return [{ name: 'config', status: 'fail', detail: describeError(err) }];
  }
  const { checks, migrated } = await databaseChecks(config);
  return [
    { name: 'config', status: 'ok', detail: 'every environment variable parses (parley help environment lists them)' },
    ...checks,
    secretKeyCheck(config, migrated),
    { name: 'egress', status: 'ok', detail: describeEgress(config.egressAllow) },
    await llmCheck(config, TIMEOUT_MS),
    await sttCheck(config, TIMEOUT_MS),
    ttsCheck(),
  ];
}

export const formatCheck = (check: Check): string => `${check.status.toUpperCase().padEnd(4)}  ${check.name.padEnd(11)}  ${check.detail}`;

export function doctorCommand(io: CliIo, done: (outcome: Outcome) => void): Command {
  return new Command('doctor')
    .summary('check the configuration, the database, the LLM endpoint and the speech providers')
    .description('Check what parley serve would run with: the configuration, the database and its migrations, the admin token and the secret key (by source, never the value), the egress allow list, whether the LLM endpoint answers GET /models (or that the built-in demo model is in use), and the speech to text and text to speech a strategy naming none would use.\nOne line per check; exits 1 when one FAILs (a WARN does not).')
    .action(async () => {
      const checks = await runChecks(io.env);
      for (const check of checks) io.stdout.write(`${formatCheck(check)}\n`);
      done(checks.some((c) => c.status === 'fail') ? 1 : 0);
    });
}
