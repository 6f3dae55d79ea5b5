import { Command, Option } from 'commander';
import { systemClock } from '../clock.ts';
import { ConfigError, loadConfig } from '../config.ts';
import { openDatabase } from '../db/database.ts';
import { migrate } from '../db/migrate.ts';
import { ROLE_NAMES } from '../modules/tokens/permissions.ts';
import { createToken } from '../modules/tokens/tokens.service.ts';
import { DATE_FORMAT, date, id } from './arguments.ts';
import type { CliIo, Outcome } from './io.ts';

interface CreateOptions {
  vendor: string;
  organization?: string;
  role: string;
  name: string;
  expiresAt?: string;
}

/** `parley token create`: mints an API token straight in the database, for when no token exists yet to ask the API with. */
export function tokenCommand(io: CliIo, done: (outcome: Outcome) => void): Command {
  const create = new Command('create')
    .summary('mint an API token straight in the database (printed once)')
    .description('Mint an API token straight in the database, without the API: the token is printed once, only its hash is kept.')
    .requiredOption('--vendor <id>', 'the vendor the token belongs to', id)
    .option('--organization <id>', 'narrow the token to one organization of that vendor', id)
    .addOption(new Option('--role <role>', 'what the token may do').choices(ROLE_NAMES).default('admin'))
    .option('--name <name>', 'a name to recognise the token by', 'cli')
    .option('--expires-at <date>', `when the token stops working: ${DATE_FORMAT}`, date)
    .action(async (options: CreateOptions) => {
      const db = openDatabase(loadConfig(io.env).database);
      try {
        await migrate(db);
        const vendor = await db.kysely.selectFrom('vendors').select('id').where('id', '=', options.vendor).executeTakeFirst();
        if (!vendor) throw new ConfigError(`There is no vendor ${options.vendor} in this database (GET /api/v1/vendors lists them)`);
        const token = await createToken(db, systemClock, null, {
          vendorId: options.vendor,
          organizationId: options.organization ?? null,
          role: options.role,
          name: options.name,
          expiresAt: options.expiresAt ?? null,
        });
        io.stdout.write(`${token.token}\n`);
      } finally {
        await db.close();
      }
      done(0);
    });
  return new Command('token')
    .summary('API tokens')
    .description('API tokens (the API at /api/v1/vendors/{vendorId}/api-tokens lists and revokes them).')
    .addCommand(create);
}
