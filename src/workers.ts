import { ConfigError } from './config.ts';
import type { Context } from './context.ts';
import { migrate } from './db/migrate.ts';
import { idempotencySweep, rateLimitSweep } from './http/sweeps.ts';
import { RATE_LIMIT_WINDOW_MS } from './http/rate-limit.ts';
import { Runner } from './jobs/runner.ts';
import { callsSweep } from './modules/calls/calls.sweep.ts';
import { deliveryJobs } from './modules/events/deliveries.jobs.ts';
import { deliveriesSweep } from './modules/events/deliveries.sweep.ts';
import { noDialer, type Dialer } from './telephony/dialer.ts';
import { taskJobs } from './modules/tasks/tasks.jobs.ts';
import type { Llm } from './calls/llm.ts';
import { analysisJobs } from './modules/analysis/analysis.jobs.ts';
import { organizationLlm } from './modules/analysis/analysis.llm.ts';
import { organizationAccess } from './modules/providers/provider-access.ts';
import { recordingJobs } from './modules/recordings/recordings.jobs.ts';
import { recordingsSweep } from './modules/recordings/recordings.sweep.ts';
import { openRecordingStorage, type RecordingStorage } from './modules/recordings/storage.ts';
import { twilioCallSidsSweep } from './modules/twilio/twilio.replays.ts';

export interface RunnerOptions {
  dialer?: Dialer;
  pollMs?: number;
  /** Where recordings are kept (the app's own); by default opened from the config. */
  recordings?: RecordingStorage;
  /** Stands for the platform's LLM in analyses (a strategy naming no `llm`); by default built from the config. */
  llm?: Llm;
}

/**
 * The job runner of a process, composed from the features: agent tasks (placed by the
 * dialer), webhook deliveries, recordings stored away and calls analysed after they end, and
 * the sweeps that keep tables from growing for ever.
 */
export function buildRunner(ctx: Context, options: RunnerOptions = {}): Runner {
  const { config } = ctx;
  const runner = new Runner(ctx.clock, ctx.log, { workerId: ctx.processId, ...(options.pollMs ? { pollMs: options.pollMs } : {}) });
  runner.register(taskJobs(ctx, {
    // The SIP dialer needs the call engine and a SIP endpoint, which `parley serve` composes
    // (src/engine.ts) and hands in; a process without them places no calls.
    dialer: options.dialer ?? noDialer,
    retry: { baseMs: config.retryBaseMs, capMs: 60 * 60_000 },
    leaseMs: config.leaseMs,
    maxVoicemails: config.taskMaxVoicemails,
  }));
  runner.register(deliveryJobs(ctx, { leaseMs: config.leaseMs }));
  const recordings = options.recordings ?? openRecordingStorage(config);
  runner.register(recordingJobs(ctx, recordings, { leaseMs: config.leaseMs }));
  runner.register(analysisJobs(ctx, organizationLlm(ctx, organizationAccess(ctx), options.llm), { leaseMs: config.leaseMs }));
  runner.addSweep(callsSweep(ctx));
  runner.addSweep(recordingsSweep(ctx, recordings));
  runner.addSweep(deliveriesSweep(ctx));
  runner.addSweep(idempotencySweep(ctx));
  runner.addSweep(rateLimitSweep(ctx, RATE_LIMIT_WINDOW_MS));
  runner.addSweep(twilioCallSidsSweep(ctx));
  return runner;
}

/**
 * `parley worker`: the job runner without the API, for scaling calls and deliveries out beside
 * API processes (PARLEY_SCHEDULER=off). Answers a function that stops it gracefully.
 */
export async function runWorker(ctx: Context, options: RunnerOptions = {}): Promise<{ runner: Runner; stop(): Promise<void> }> {
  if (ctx.config.dialer === 'sip' && !options.dialer) {
    throw new ConfigError('parley worker places no SIP calls (they run in parley serve, which has the call runtime; sip is the default, for serve): set PARLEY_DIALER=none for workers');
  }
  await migrate(ctx.db);
  const recordings = options.recordings ?? openRecordingStorage(ctx.config);
  const runner = buildRunner(ctx, { ...options, recordings });
  runner.start();
  ctx.log.info({ workerId: runner.workerId }, 'worker started');
  return {
    runner,
    async stop() {
      await runner.stop();
      await recordings.objects.close();
      await ctx.close();
    },
  };
}
