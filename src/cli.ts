import { parseArgs } from 'node:util';
import closeWithGrace from 'close-with-grace';
import { systemClock } from './clock.ts';
import { ConfigError, loadConfig } from './config.ts';
import { createContext } from './context.ts';
import { openDatabase } from './db/database.ts';
import { migrate } from './db/migrate.ts';
import { startServer } from './server.ts';
import { runWorker } from './workers.ts';
import { createToken } from './modules/tokens/tokens.service.ts';
import { ROLE_NAMES, type Role } from './modules/tokens/permissions.ts';

const USAGE = `usage: parley <command>

  serve                 run the API, the task scheduler and the call runtime (PARLEY_SCHEDULER=off: API only)
  worker                run only the task scheduler, to scale calls out beside API processes
  migrate               apply pending database migrations and exit
  token create --vendor <id> [--organization <id>] [--role viewer|editor|admin] [--name <name>] [--expires-at <iso>]
                        mint an API token straight in the database (printed once)

Environment: PORT, HOST, DATABASE_URL, PARLEY_ADMIN_TOKEN, PARLEY_SECRET_KEY, PARLEY_EGRESS_ALLOW, LOG_LEVEL`;

async function run(argv: string[]): Promise<number> {
  const [command, sub, ...rest] = argv;
  if (command === 'serve') {
    await startServer(loadConfig());
    return -1; // keep running
  }
  if (command === 'worker') {
    const worker = await runWorker(createContext(loadConfig()));
    closeWithGrace({ delay: 10_000 }, () => worker.stop());
    return -1; // keep running
  }
  if (command === 'migrate') {
    const db = openDatabase(loadConfig().database);
    try {
      const applied = await migrate(db);
      process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n');
    } finally {
      await db.close();
    }
    return 0;
  }
  if (command === 'token' && sub === 'create') {
    const { values } = parseArgs({
      args: rest,
      options: {
        vendor: { type: 'string' },
        organization: { type: 'string' },
        role: { type: 'string', default: 'admin' },
        name: { type: 'string', default: 'cli' },
        'expires-at': { type: 'string' },
      },
    });
    if (!values.vendor) throw new ConfigError('--vendor is required');
    if (!ROLE_NAMES.includes(values.role as Role)) throw new ConfigError(`--role must be one of ${ROLE_NAMES.join(', ')}`);
    const db = openDatabase(loadConfig().database);
    try {
      await migrate(db);
      const vendor = await db.kysely.selectFrom('vendors').select('id').where('id', '=', values.vendor).executeTakeFirst();
      if (!vendor) throw new ConfigError(`no vendor ${values.vendor}`);
      const token = await createToken(db, systemClock, null, {
        vendorId: values.vendor,
        organizationId: values.organization ?? null,
        role: values.role,
        name: values.name,
        expiresAt: values['expires-at'] ?? null,
      });
      process.stdout.write(`${token.token}\n`);
    } finally {
      await db.close();
    }
    return 0;
  }
  process.stderr.write(`${USAGE}\n`);
  return command === undefined || command === 'help' || command === '--help' ? 0 : 2;
}

run(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (err: unknown) => {
    process.stderr.write(`parley: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
