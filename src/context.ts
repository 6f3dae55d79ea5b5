import { hostname } from 'node:os';
import type { FastifyBaseLogger } from 'fastify';
import pino, { type DestinationStream } from 'pino';
import { systemClock, type Clock } from './clock.ts';
import type { Config } from './config.ts';
import { createSecretBox, type SecretBox } from './crypto/secret-box.ts';
import { openDatabase, type Db } from './db/database.ts';
import { createEgress, type EgressRequest, type EgressResponse } from './egress/client.ts';
import { parseAllowList, type AllowList } from './egress/policy.ts';
import { logDestination, loggerOptions } from './logging.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The process context (see createContext); decorated once by buildApp. */
    ctx: Context;
  }
}

/** The one outbound HTTP client (tool webhooks, event hooks) and the address policy it enforces. */
export interface Egress {
  readonly allow: AllowList;
  request(request: EgressRequest): Promise<EgressResponse>;
}

/**
 * What every part of a Parley process shares, built once per process (or per test app) and
 * passed down explicitly: the configuration, the database, the one clock, the logger, the box
 * that seals secrets at rest, and the egress client. Nothing else is process-global.
 */
export interface Context {
  /** Names this process (or test app) in leases: `host:pid:random`. */
  readonly processId: string;
  readonly config: Config;
  readonly db: Db;
  readonly clock: Clock;
  readonly log: FastifyBaseLogger;
  readonly secrets: SecretBox;
  readonly egress: Egress;
  /** Closes what the context opened (the egress pools, and the database unless it was given). */
  close(): Promise<void>;
}

export interface ContextOptions {
  /** An already-open database (tests, benchmarks); it is then left open by close(). */
  db?: Db;
  clock?: Clock;
  /** A logger to use as it is; otherwise one is made from config.logLevel writing to `logStream` (stdout, as PARLEY_LOG_FORMAT says). */
  log?: FastifyBaseLogger;
  logStream?: DestinationStream;
}

export function createContext(config: Config, options: ContextOptions = {}): Context {
  const db = options.db ?? openDatabase(config.database);
  const allow = parseAllowList(config.egressAllow);
  const client = createEgress({ allow });
  const log = options.log ?? pino(loggerOptions(config.logLevel), options.logStream ?? logDestination(config.logFormat, process.stdout) ?? undefined);
  return {
    processId: `${hostname()}:${process.pid}:${crypto.randomUUID().slice(0, 8)}`,
    config,
    db,
    clock: options.clock ?? systemClock,
    log,
    secrets: createSecretBox(config.secretKey),
    egress: { allow, request: (request) => client.request(request) },
    async close() {
      await client.close();
      if (!options.db) await db.close();
    },
  };
}
