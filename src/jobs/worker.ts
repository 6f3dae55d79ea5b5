import pino from 'pino';
import { systemClock, type Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { openDatabase, type Db } from '../db/database.ts';
import { migrate } from '../db/migrate.ts';
import { REDACT_PATHS } from '../http/logging.ts';
import { noDialer, type Dialer } from './dialer.ts';
import { DEFAULT_RETRY } from './retry.ts';
import { Scheduler, type SchedulerOptions } from './scheduler.ts';
import { createDeliverer } from '../modules/events/deliverer.ts';

/** The scheduler as configured, for `parley serve` (inside the app) and `parley worker` (alone). */
export function createScheduler(
  config: Config,
  db: Db,
  log: SchedulerOptions['log'],
  options: { clock?: Clock; dialer?: Dialer; pollMs?: number } = {},
): Scheduler {
  return new Scheduler({
    db,
    log,
    clock: options.clock ?? systemClock,
    dialer: options.dialer ?? noDialer,
    retry: { ...DEFAULT_RETRY, baseMs: config.retryBaseMs },
    leaseMs: config.leaseMs,
    ...(options.pollMs ? { pollMs: options.pollMs } : {}),
  });
}

/**
 * `parley worker`: the scheduler and the event-hook deliverer without the API, for scaling out
 * beside API processes. SIGINT or
 * SIGTERM stop claiming and let running calls finish (up to the grace period).
 */
export async function runWorker(config: Config, options: { dialer?: Dialer; pollMs?: number } = {}): Promise<Scheduler> {
  const log = pino({ level: config.logLevel, redact: { paths: REDACT_PATHS, censor: '[Redacted]' } });
  const db = openDatabase(config.database);
  await migrate(db);
  const scheduler = createScheduler(config, db, log, options);
  // Event hooks go out from workers too, so an API-only fleet (PARLEY_SCHEDULER=off) still delivers.
  const deliverer = createDeliverer(config, db, log, options.pollMs ? { pollMs: options.pollMs } : {});
  scheduler.start();
  deliverer.start();
  log.info({ workerId: scheduler.workerId, dialer: (options.dialer ?? noDialer).name }, 'worker started');
  const shutdown = (signal: string) => {
    log.info({ signal }, 'worker stopping');
    void Promise.all([scheduler.stop(), deliverer.stop()]).then(() => db.close()).then(() => process.exit(0));
  };
  process.once('SIGINT', () => shutdown('SIGINT'));
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  return scheduler;
}
