import closeWithGrace from 'close-with-grace';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.ts';
import type { Config } from './config.ts';
import { createContext } from './context.ts';

const SHUTDOWN_GRACE_MS = 10_000;

function announceAdminToken(token: string): void {
  // Printed once, straight to the terminal, never through the logger (logs never carry tokens).
  process.stdout.write(
    `\n  Parley generated a platform admin token. It is shown this once; only its hash is kept:\n\n    ${token}\n\n` +
      '  Set PARLEY_ADMIN_TOKEN to choose your own instead.\n\n',
  );
}

/** Listens, and on SIGINT/SIGTERM stops taking requests, lets running ones finish (10 s at most), then exits. */
export async function startServer(config: Config): Promise<FastifyInstance> {
  const ctx = createContext(config);
  const app = await buildApp(ctx, { announceAdminToken, runJobs: config.schedulerEnabled });
  closeWithGrace({ delay: SHUTDOWN_GRACE_MS }, async ({ signal, err }) => {
    if (err) app.log.error({ err }, 'shutting down after an error');
    else app.log.info({ signal }, 'shutting down');
    await app.close();
    await ctx.close();
  });
  await app.listen({ port: config.port, host: config.host });
  return app;
}
