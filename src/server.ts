import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.ts';
import type { Config } from './config.ts';

const SHUTDOWN_GRACE_MS = 10_000;

function announceAdminToken(token: string): void {
  // Printed once, straight to the terminal, never through the logger (logs never carry tokens).
  process.stdout.write(
    `\n  Parley generated a platform admin token. It is shown this once; only its hash is kept:\n\n    ${token}\n\n` +
      '  Set PARLEY_ADMIN_TOKEN to choose your own instead.\n\n',
  );
}

/** Listens, and on SIGINT/SIGTERM stops taking requests, lets running ones finish, then exits. */
export async function startServer(config: Config): Promise<FastifyInstance> {
  const app = await buildApp({ config, announceAdminToken, runScheduler: config.schedulerEnabled });
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down');
    const timer = setTimeout(() => process.exit(1), SHUTDOWN_GRACE_MS);
    timer.unref();
    app.close().then(
      () => process.exit(0),
      (err: unknown) => {
        app.log.error({ err }, 'error during shutdown');
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', () => shutdown('SIGINT'));
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  await app.listen({ port: config.port, host: config.host });
  return app;
}
