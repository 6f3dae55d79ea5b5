import closeWithGrace from 'close-with-grace';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { buildApp } from './app.ts';
import type { Config } from './config.ts';
import { createContext } from './context.ts';
import { startupChecks, type AdminTokenSource } from './diagnostics.ts';
import { llmCheck, sttCheck, ttsCheck } from './diagnostics-providers.ts';
import { describeTakenPort } from './port-holder.ts';

const SHUTDOWN_GRACE_MS = 10_000;
/** The start-up probes of the LLM endpoint and the STT server: short, and only ever a warning. */
const LLM_PROBE_TIMEOUT_MS = 3_000;

function announceAdminToken(token: string): void {
  // Printed once, straight to the terminal, never through the logger (logs never carry tokens).
  process.stdout.write(
    `\n  Parley generated a platform admin token. It is shown this once; only its hash is kept:\n\n    ${token}\n\n` +
      '  Set PARLEY_ADMIN_TOKEN to choose your own instead.\n\n',
  );
}

/**
 * One log line per thing an operator gets wrong first: which admin token is in effect, the
 * database, the secret key, the egress allow list, whether the LLM endpoint answers (a
 * warning when it does not: the API works without it, calls do not; or that the demo model is in
 * use), and the speech to text and text to speech of strategies naming none.
 */
function reportStartup(log: FastifyBaseLogger, config: Config, adminToken: AdminTokenSource): void {
  for (const check of startupChecks(config, adminToken)) log.info({ check: check.name }, `${check.name}: ${check.detail}`);
  const tts = ttsCheck();
  log.info({ check: tts.name }, `TTS: ${tts.detail}`);
  // The STT first: the page that waits for the llm line then has both.
  void sttCheck(config, LLM_PROBE_TIMEOUT_MS)
    .then((stt) => log[stt.status === 'ok' ? 'info' : 'warn']({ check: stt.name }, `STT: ${stt.detail}`))
    .then(() => llmCheck(config, LLM_PROBE_TIMEOUT_MS))
    .then((check) => log[check.status === 'ok' ? 'info' : 'warn']({ check: 'llm' }, `LLM endpoint: ${check.detail}`));
}

/** Listens, and on SIGINT/SIGTERM stops taking requests, lets running ones finish (10 s at most), then exits. */
export async function startServer(config: Config): Promise<FastifyInstance> {
  const ctx = createContext(config);
  let generated = false;
  const app = await buildApp(ctx, {
    announceAdminToken: (token) => {
      generated = true;
      announceAdminToken(token);
    },
    runJobs: config.schedulerEnabled,
  });
  closeWithGrace({ delay: SHUTDOWN_GRACE_MS }, async ({ signal, err }) => {
    if (err) app.log.error({ err }, 'shutting down after an error');
    else app.log.info({ signal }, 'shutting down');
    await app.close();
    await ctx.close();
  });
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    // One line that says who holds it: a service already running there is the usual reason.
    throw new Error(`PORT: ${describeTakenPort(config.port, ['tcp'], { host: config.host })} on ${config.host}; stop it, or choose another port with PORT or --port`, { cause: err });
  }
  reportStartup(app.log, config, config.adminToken ? 'env' : generated ? 'generated' : 'stored');
  return app;
}
