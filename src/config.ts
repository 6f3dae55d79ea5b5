import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname, resolve } from 'node:path';

export type DatabaseConfig =
  | { dialect: 'sqlite'; filename: string }
  | { dialect: 'postgres'; connectionString: string };

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly database: DatabaseConfig;
  /** Platform admin token from the environment; when absent one is generated on first start. */
  readonly adminToken: string | null;
  readonly secretKey: Buffer;
  readonly egressAllow: string;
  readonly publicUrl: string | null;
  readonly logLevel: string;
  readonly bodyLimit: number;
  /** Whether `parley serve` also runs the task scheduler (PARLEY_SCHEDULER=off for API-only nodes). */
  readonly schedulerEnabled: boolean;
  readonly dialer: 'none';
  readonly taskMaxAttempts: number;
  readonly retryBaseMs: number;
  readonly leaseMs: number;
  /** Requests per token per minute (PARLEY_RATE_LIMIT_PER_MINUTE; 0 turns it off). */
  readonly rateLimitPerMinute: number;
  /** The OpenAI-compatible endpoint used during calls; null means the public OpenAI API. */
  readonly openaiBaseUrl: string | null;
  /** Sent as a bearer token to the LLM endpoint; null sends none (local servers need none). */
  readonly openaiApiKey: string | null;
  /** The model when a strategy names none. */
  readonly llmDefaultModel: string;
  /** A call with no client frame for this long ends (reason idle_timeout). */
  readonly callIdleMs: number;
  /** A call ends after this long whatever happens (reason max_duration). */
  readonly callMaxMs: number;
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

export function parseDatabaseUrl(url: string): DatabaseConfig {
  if (url.startsWith('sqlite:')) {
    const filename = url.slice('sqlite:'.length).replace(/^\/\//, '');
    if (!filename) throw new ConfigError('DATABASE_URL sqlite: needs a file name, e.g. sqlite:./data/parley.db');
    return { dialect: 'sqlite', filename: filename === ':memory:' ? filename : resolve(filename) };
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    return { dialect: 'postgres', connectionString: url };
  }
  throw new ConfigError('DATABASE_URL must start with sqlite: or postgres://');
}

function parsePositive(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new ConfigError(`${name} must be a positive number, got "${value}"`);
  return n;
}

function parsePort(value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`PORT must be 0..65535, got "${value}"`);
  return port;
}

/**
 * The key that encrypts secrets at rest. With the embedded database it lives next to the
 * database file, so a fresh install works without setup; with PostgreSQL several processes
 * share the database, so the key has to come from the environment.
 */
function loadSecretKey(env: Env, database: DatabaseConfig): Buffer {
  const raw = env.PARLEY_SECRET_KEY;
  if (raw) {
    const key = Buffer.from(raw, 'base64');
    if (key.length !== 32) throw new ConfigError('PARLEY_SECRET_KEY must be 32 bytes, base64-encoded');
    return key;
  }
  if (database.dialect === 'postgres') {
    throw new ConfigError('PARLEY_SECRET_KEY is required with PostgreSQL (generate one: openssl rand -base64 32)');
  }
  if (database.filename === ':memory:') return randomBytes(32);
  const keyFile = resolve(dirname(database.filename), 'secret.key');
  if (!existsSync(keyFile)) {
    mkdirSync(dirname(keyFile), { recursive: true });
    writeFileSync(keyFile, randomBytes(32).toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
  }
  const key = Buffer.from(readFileSync(keyFile, 'utf8').trim(), 'base64');
  if (key.length !== 32) throw new ConfigError(`${keyFile} does not hold a 32-byte base64 key`);
  return key;
}

/** Only `none` exists until SIP calling lands; naming anything else is a start-up error, not a silent fallback. */
function parseDialer(value: string | undefined): 'none' {
  if (value === undefined || value === '' || value === 'none') return 'none';
  throw new ConfigError(`PARLEY_DIALER "${value}" is not available; the only dialer is "none"`);
}

export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  const database = overrides.database ?? parseDatabaseUrl(env.DATABASE_URL || 'sqlite:./data/parley.db');
  const config: Config = {
    port: parsePort(env.PORT, 8080),
    host: env.HOST || '127.0.0.1',
    database,
    adminToken: env.PARLEY_ADMIN_TOKEN || null,
    secretKey: overrides.secretKey ?? loadSecretKey(env, database),
    egressAllow: env.PARLEY_EGRESS_ALLOW ?? '',
    publicUrl: env.PARLEY_PUBLIC_URL || null,
    logLevel: env.LOG_LEVEL || 'info',
    bodyLimit: 1024 * 1024,
    schedulerEnabled: (env.PARLEY_SCHEDULER ?? 'on') !== 'off',
    dialer: parseDialer(env.PARLEY_DIALER),
    taskMaxAttempts: parsePositive('PARLEY_TASK_MAX_ATTEMPTS', env.PARLEY_TASK_MAX_ATTEMPTS, 3),
    retryBaseMs: parsePositive('PARLEY_RETRY_BASE_SECONDS', env.PARLEY_RETRY_BASE_SECONDS, 60) * 1000,
    leaseMs: parsePositive('PARLEY_LEASE_SECONDS', env.PARLEY_LEASE_SECONDS, 60) * 1000,
    rateLimitPerMinute: env.PARLEY_RATE_LIMIT_PER_MINUTE === '0' ? 0 : parsePositive('PARLEY_RATE_LIMIT_PER_MINUTE', env.PARLEY_RATE_LIMIT_PER_MINUTE, 6000),
    openaiBaseUrl: env.OPENAI_BASE_URL || null,
    openaiApiKey: env.OPENAI_API_KEY || null,
    llmDefaultModel: env.PARLEY_LLM_DEFAULT_MODEL || 'gpt-4o-mini',
    callIdleMs: parsePositive('PARLEY_CALL_IDLE_SECONDS', env.PARLEY_CALL_IDLE_SECONDS, 600) * 1000,
    callMaxMs: parsePositive('PARLEY_CALL_MAX_SECONDS', env.PARLEY_CALL_MAX_SECONDS, 3600) * 1000,
    ...overrides,
  };
  return Object.freeze(config);
}
