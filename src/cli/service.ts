import { Command, Option } from 'commander';
import closeWithGrace from 'close-with-grace';
import { PROVIDER_VARIABLES } from '../calls/providers/registry.ts';
import { loadConfig, type Config } from '../config.ts';
import { createContext } from '../context.ts';
import { openDatabase } from '../db/database.ts';
import { migrate } from '../db/migrate.ts';
import { startServer } from '../server.ts';
import { runWorker } from '../workers.ts';
import { port } from './arguments.ts';
import type { CliIo, Outcome } from './io.ts';

const ENV_HINT = '\nConfigured by environment variables: parley help environment lists them.';

/** `parley serve`: --port and --host win over PORT and HOST. */
export function serveCommand(io: CliIo, done: (outcome: Outcome) => void): Command {
  return new Command('serve')
    .summary('run the API, the task scheduler and the call runtime')
    .description('Run the API, the task scheduler and the call runtime in one process (PARLEY_SCHEDULER=off: the API only).\nMigrations are applied first. SIGINT or SIGTERM stop it gracefully.')
    .addOption(new Option('--port <port>', 'TCP port to listen on (overrides PORT; default 8080)').argParser(port))
    .addOption(new Option('--host <address>', 'address to listen on, 0.0.0.0 for all (overrides HOST; default 127.0.0.1)'))
    .addHelpText('after', ENV_HINT)
    .action(async (options: { port?: number; host?: string }) => {
      const overrides: Partial<Config> = {
        ...(options.port !== undefined ? { port: options.port } : {}),
        ...(options.host !== undefined ? { host: options.host } : {}),
      };
      await startServer(loadConfig(io.env, overrides, PROVIDER_VARIABLES));
      done('running');
    });
}

export function workerCommand(io: CliIo, done: (outcome: Outcome) => void): Command {
  return new Command('worker')
    .summary('run only the task scheduler and event-hook deliveries')
    .description('Run the task scheduler, webhook deliveries and sweeps without the API, to scale out beside API processes (PARLEY_SCHEDULER=off on those).')
    .addHelpText('after', ENV_HINT)
    .action(async () => {
      const worker = await runWorker(createContext(loadConfig(io.env, {}, PROVIDER_VARIABLES)));
      closeWithGrace({ delay: 10_000 }, () => worker.stop());
      done('running');
    });
}

export function migrateCommand(io: CliIo, done: (outcome: Outcome) => void): Command {
  return new Command('migrate')
    .summary('apply pending database migrations and exit')
    .description('Apply pending database migrations and exit (parley serve also applies them at start).')
    .addHelpText('after', ENV_HINT)
    .action(async () => {
      const db = openDatabase(loadConfig(io.env).database);
      try {
        const applied = await migrate(db);
        io.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n');
      } finally {
        await db.close();
      }
      done(0);
    });
}
