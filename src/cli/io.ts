import { CommanderError } from 'commander';
import { ConfigError } from '../config.ts';
import { AppError } from '../http/errors.ts';
import { ApiError, apiMessage, ParleyError } from './api-client.ts';

/** Where a command reads and writes; the real process streams, or test streams. */
export interface CliIo {
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean };
  readonly stderr: NodeJS.WritableStream;
  readonly stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  /** The environment that config.ts reads; process.env when absent. */
  readonly env?: Record<string, string | undefined>;
}

/** What a command's action leaves: an exit code, or a service that keeps the process running. */
export type Outcome = number | 'running';

/** 2 for a command line that does not parse, 1 for a command that failed. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** A failure the user can act on, said in one message (details on their own lines). */
export function describeError(err: unknown): string {
  if (err instanceof ApiError || err instanceof ConfigError || err instanceof CommanderError) return err.message;
  if (err instanceof ParleyError) return apiMessage(err);
  if (err instanceof AppError) return [err.message, ...err.details.map((d) => `  ${d.path}: ${d.message}`)].join('\n');
  return err instanceof Error ? err.message : String(err);
}
