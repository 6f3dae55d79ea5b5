import { randomBytes } from 'node:crypto';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildApp, type AppOptions } from '../../src/app.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import { openDatabase, type Db, type Dialect } from '../../src/db/database.ts';
import { createTestDatabase, type TestDatabase } from './dialects.ts';

export const ADMIN_TOKEN = 'test-admin-token-with-enough-length';

export interface TestApp {
  app: FastifyInstance;
  db: Db;
  config: Config;
  database: TestDatabase;
  /** app.inject with JSON body and bearer token conveniences. */
  call(method: InjectOptions['method'], url: string, opts?: { token?: string | null; body?: unknown; headers?: Record<string, string> }): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

/** A fresh migrated app on a fresh database of the dialect, as the service builds itself. */
export async function buildTestApp(
  dialect: Dialect,
  env: Record<string, string> = {},
  logger: unknown = false,
  extra: Pick<AppOptions, 'clock' | 'dialer' | 'onRoute'> & { reuse?: Pick<TestApp, 'database' | 'config'> } = {},
): Promise<TestApp> {
  // `reuse`: the database and config (secret key included) of an app closed before, without dropping: a restart.
  const { reuse, ...options } = extra;
  const database = reuse?.database ?? (await createTestDatabase(dialect));
  const config = reuse?.config ?? loadConfig(
    { PARLEY_ADMIN_TOKEN: ADMIN_TOKEN, LOG_LEVEL: 'warn', ...env },
    { database: database.config, secretKey: randomBytes(32) },
  );
  const db = openDatabase(config.database, { poolSize: 5 });
  const app = await buildApp({ config, db, logger: logger as never, ...options });
  await app.ready();
  return {
    app,
    db,
    config,
    database,
    call: (method, url, opts = {}) => {
      const token = opts.token === undefined ? ADMIN_TOKEN : opts.token;
      const headers: Record<string, string> = { ...(token ? { authorization: `Bearer ${token}` } : {}), ...opts.headers };
      return app.inject({ method, url, headers, ...(opts.body !== undefined ? { payload: opts.body as object } : {}) });
    },
    close: async () => {
      await app.close();
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
