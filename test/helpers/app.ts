import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import pino from 'pino';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildApp, type AppOptions } from '../../src/app.ts';
import type { Clock } from '../../src/clock.ts';
import { PROVIDER_VARIABLES } from '../../src/calls/providers/registry.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import { createContext, type Context } from '../../src/context.ts';
import { openDatabase, type Db, type Dialect, type PgTimeouts } from '../../src/db/database.ts';
import { loggerOptions } from '../../src/logging.ts';
import { createTestDatabase, type TestDatabase } from './dialects.ts';

export const ADMIN_TOKEN = 'test-admin-token-with-enough-length';

export interface TestApp {
  app: FastifyInstance;
  ctx: Context;
  db: Db;
  config: Config;
  database: TestDatabase;
  /** Everything the app logged, as text (with the production redaction applied). */
  logs(): string;
  /** app.inject with JSON body and bearer token conveniences. */
  call(method: InjectOptions['method'], url: string, opts?: { token?: string | null; body?: unknown; headers?: Record<string, string> }): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export interface TestAppOptions extends Pick<AppOptions, 'dialer' | 'onRoute' | 'llm' | 'voice'> {
  clock?: Clock;
  /** The database and config (secret key included) of an app closed before, without dropping: a restart. */
  reuse?: Pick<TestApp, 'database' | 'config'>;
  /** The log level the app logs at (its lines are kept for logs()). */
  logLevel?: string;
  /** Wraps the app's database (a test that counts the queries an attack costs). */
  wrapDb?: (db: Db) => Db;
  /** Shorter PostgreSQL waits than the service's (a test of a database that stopped answering). */
  pgTimeouts?: PgTimeouts;
}

/** A fresh migrated app on a fresh database of the dialect, as the service builds itself. */
export async function buildTestApp(dialect: Dialect, env: Record<string, string> = {}, options: TestAppOptions = {}): Promise<TestApp> {
  const { reuse, clock, logLevel = 'warn', wrapDb, pgTimeouts, ...appOptions } = options;
  const database = reuse?.database ?? (await createTestDatabase(dialect));
  const config = reuse?.config ?? loadConfig(
    // No SIP endpoint unless a test asks for one (PARLEY_DIALER defaults to sip).
    { PARLEY_ADMIN_TOKEN: ADMIN_TOKEN, LOG_LEVEL: logLevel, PARLEY_DIALER: 'none', ...env },
    { database: database.config, secretKey: randomBytes(32) },
    PROVIDER_VARIABLES,
  );
  const opened = openDatabase(config.database, { poolSize: 5, ...(pgTimeouts ? { pgTimeouts } : {}) });
  const db = wrapDb ? wrapDb(opened) : opened;
  const lines: string[] = [];
  const stream = new Writable({ write: (chunk: Buffer, _enc, done) => { lines.push(chunk.toString('utf8')); done(); } });
  const log = pino({ ...loggerOptions(logLevel) }, stream);
  const ctx = createContext(config, { db, log, ...(clock ? { clock } : {}) });
  let app: Awaited<ReturnType<typeof buildApp>>;
  try {
    app = await buildApp(ctx, appOptions);
    await app.ready();
  } catch (err) {
    // A start that fails (a test of it, or a broken one) leaves nothing open to keep the test's process alive.
    await ctx.close().catch(() => undefined);
    await db.close().catch(() => undefined);
    if (!reuse) await database.drop().catch(() => undefined);
    throw err;
  }
  return {
    app,
    ctx,
    db,
    config,
    database,
    logs: () => lines.join(''),
    call: (method, url, opts = {}) => {
      const token = opts.token === undefined ? ADMIN_TOKEN : opts.token;
      const headers: Record<string, string> = { ...(token ? { authorization: `Bearer ${token}` } : {}), ...opts.headers };
      return app.inject({ method, url, headers, ...(opts.body !== undefined ? { payload: opts.body as object } : {}) });
    },
    close: async () => {
      await app.close();
      await ctx.close();
      await db.close();
      await database.drop();
    },
  };
}

export interface Tenant {
  vendorId: string;
  organizationId: string;
  orgPath: string;
}

/** A vendor with one organization, created through the admin API. */
export async function createTenant(t: TestApp, name = 'Acme'): Promise<Tenant> {
  const vendor = await t.call('POST', '/api/v1/vendors', { body: { name } });
  if (vendor.statusCode !== 201) throw new Error(`vendor: ${vendor.body}`);
  const vendorId = vendor.json().data.id as string;
  const org = await t.call('POST', `/api/v1/vendors/${vendorId}/organizations`, { body: { name: `${name} main` } });
  if (org.statusCode !== 201) throw new Error(`organization: ${org.body}`);
  const organizationId = org.json().data.id as string;
  return { vendorId, organizationId, orgPath: `/api/v1/vendors/${vendorId}/organizations/${organizationId}` };
}

export async function createApiToken(
  t: TestApp,
  vendorId: string,
  body: Record<string, unknown>,
  token?: string,
): Promise<string> {
  const res = await t.call('POST', `/api/v1/vendors/${vendorId}/api-tokens`, { body: { name: 'test', ...body }, token });
  if (res.statusCode !== 201) throw new Error(`token: ${res.statusCode} ${res.body}`);
  return res.json().data.token as string;
}
